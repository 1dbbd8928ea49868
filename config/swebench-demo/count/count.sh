#!/usr/bin/env bash
# count_words TEXT: prints how many words TEXT has.
count_words() {
  local n=0
  for _ in $1; do
    n=$((n + 1))
  done
  echo $((n - 1))
}
