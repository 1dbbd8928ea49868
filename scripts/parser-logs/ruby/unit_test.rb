# test-unit cases that pass, fail, error and are omitted (run with -v).
require "test/unit"

class TestParser < Test::Unit::TestCase
  def test_passes
    assert_equal(2, 1 + 1)
  end

  def test_fails
    assert_equal(3, 1 + 1)
  end

  def test_errors
    raise "boom"
  end

  def test_omitted
    omit("not here")
  end

  def test_pending
    pend("todo")
  end

  test "described with spaces" do
    assert(true)
  end

  sub_test_case "a sub case" do
    test "nested one" do
      assert(true)
    end
  end
end
