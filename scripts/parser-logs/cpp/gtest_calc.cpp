// googletest cases that pass, fail, are skipped, parameterised and crash (CRASH=1).
#include <gtest/gtest.h>
#include <cstdlib>
#include <iostream>

int add(int a, int b) { return a + b; }

TEST(Calculator, Adds) { EXPECT_EQ(add(1, 2), 3); }
TEST(Calculator, FailsToAdd) { EXPECT_EQ(add(1, 2), 4) << "one plus two"; }
TEST(Calculator, Skipped) { GTEST_SKIP() << "not here"; }
TEST(Calculator, PrintsWithoutNewline) {
  std::cout << "no newline from a test";
  SUCCEED();
}
TEST(Other, Adds) { EXPECT_EQ(add(0, 0), 0); }
TEST(Other, Crashes) {
  if (std::getenv("CRASH")) std::abort();
}

class Params : public ::testing::TestWithParam<int> {};
TEST_P(Params, IsSmall) { EXPECT_LT(GetParam(), 3); }
INSTANTIATE_TEST_SUITE_P(Numbers, Params, ::testing::Values(1, 2, 5));
