#!/usr/bin/env bash
source "$(dirname "$0")/greet.sh"
result=$(greet World)
if [ "$result" != "Hello, World!" ]; then
  echo "FAIL: greet World gave '$result'"
  exit 1
fi
echo "PASS"
