<?php
// PHPUnit tests that pass, fail, error, are skipped and incomplete, with a data provider (run with --testdox).
use PHPUnit\Framework\TestCase;

final class CalculatorTest extends TestCase
{
    public function testAddsNumbers(): void
    {
        $this->assertSame(4, 2 + 2);
    }

    public function testSubtractsWrongly(): void
    {
        $this->assertSame(1, 3 - 1);
    }

    public function testThrows(): void
    {
        throw new RuntimeException('boom');
    }

    public function testSkipped(): void
    {
        $this->markTestSkipped('not here');
    }

    public function testIncomplete(): void
    {
        $this->markTestIncomplete('later');
    }

    /** @dataProvider pairs */
    public function testWithData(int $a, int $b): void
    {
        echo "output without a newline";
        $this->assertSame($a, $b);
    }

    public static function pairs(): array
    {
        return ['same ünïcode' => [1, 1], 'different' => [1, 2]];
    }
}
