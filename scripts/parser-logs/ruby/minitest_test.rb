# Minitest cases that pass, fail, error and skip (run with -v).
require "minitest/autorun"

class CalculatorTest < Minitest::Test
  def test_adds
    assert_equal 4, 2 + 2
  end

  def test_fails
    assert_equal 5, 2 + 2
  end

  def test_raises
    raise ArgumentError, "boom"
  end

  def test_skipped
    skip "later"
  end

  def test_ünïcode_name
    print "output without a newline"
    assert true
  end
end

class OtherTest < Minitest::Test
  def test_adds
    assert true
  end
end
