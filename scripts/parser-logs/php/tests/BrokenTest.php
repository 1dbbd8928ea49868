<?php
// A parse error: phpunit stops before running the suite.
final class BrokenTest extends PHPUnit\Framework\TestCase {
    public function testNothing(): void { $this->assertTrue(true) }
}
