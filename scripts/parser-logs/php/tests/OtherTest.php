<?php
use PHPUnit\Framework\TestCase;

final class OtherTest extends TestCase
{
    public function testAddsNumbers(): void
    {
        $this->assertTrue(true);
    }
}
