#!/usr/bin/env bash
# Prints a pytest-style line (PASSED/FAILED test.sh::test_greet); exits 1 when it fails.
source "$(dirname "$0")/greet.sh"
result=$(greet World)
if [ "$result" != "Hello, World!" ]; then
  echo "FAILED test.sh::test_greet - greet World gave '$result'"
  exit 1
fi
echo "PASSED test.sh::test_greet"
