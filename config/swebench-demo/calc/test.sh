#!/usr/bin/env bash
# Prints one pytest-style line per test (PASSED/FAILED test.sh::name); exits 1 when one fails.
source "$(dirname "$0")/calc.sh"
failed=0
check() {
  local result
  result=$(add "$2" "$3")
  if [ "$result" = "$4" ]; then
    echo "PASSED test.sh::$1"
  else
    echo "FAILED test.sh::$1 - add $2 $3 gave $result, expected $4"
    failed=1
  fi
}
check test_add 2 3 5
check test_add_zero 7 0 7
exit $failed
