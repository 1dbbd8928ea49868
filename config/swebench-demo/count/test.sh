#!/usr/bin/env bash
# Prints a pytest-style line (PASSED/FAILED test.sh::test_count_words); exits 1 when it fails.
source "$(dirname "$0")/count.sh"
result=$(count_words "one two three")
if [ "$result" != "3" ]; then
  echo "FAILED test.sh::test_count_words - count_words 'one two three' gave $result, expected 3"
  exit 1
fi
echo "PASSED test.sh::test_count_words"
