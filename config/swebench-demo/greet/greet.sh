#!/usr/bin/env bash
# greet NAME: prints a greeting.
greet() {
  echo "Helo, $1!"
}
