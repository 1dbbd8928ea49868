#!/usr/bin/env bash
source "$(dirname "$0")/count.sh"
result=$(count_words "one two three")
if [ "$result" != "3" ]; then
  echo "FAIL: count_words 'one two three' gave $result, expected 3"
  exit 1
fi
echo "PASS"
