#!/usr/bin/env bash
source "$(dirname "$0")/calc.sh"
result=$(add 2 3)
if [ "$result" != "5" ]; then
  echo "FAIL: add 2 3 gave $result, expected 5"
  exit 1
fi
echo "PASS"
