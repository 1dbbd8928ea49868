// doctest cases with subcases that pass and fail, special characters in names (run with -s -r=xml).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <cstdlib>

int add(int a, int b) { return a + b; }

TEST_CASE("adding numbers") {
  SUBCASE("small") { CHECK(add(1, 2) == 3); }
  SUBCASE("wrong <on> \"purpose\" & more") { CHECK(add(1, 2) == 4); }
  SUBCASE("outer") {
    SUBCASE("inner passes") { CHECK(add(0, 0) == 0); }
    SUBCASE("inner fails") { CHECK(add(2, 2) == 5); }
  }
}

TEST_CASE("ünïcode case") {
  SUBCASE("only one") { CHECK(true); }
}

TEST_CASE("no subcases") { CHECK(add(1, 1) == 2); }

TEST_CASE("fails outside subcases") {
  CHECK(add(1, 1) == 3);
  SUBCASE("after the failure") { CHECK(true); }
}

TEST_CASE("crashes when asked") {
  SUBCASE("before") { CHECK(true); }
  SUBCASE("aborts") {
    if (std::getenv("CRASH")) std::abort();
    CHECK(true);
  }
}
