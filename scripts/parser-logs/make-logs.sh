#!/usr/bin/env bash
# Runs real test frameworks on the tiny projects next to this script and writes their output, as an eval
# script would capture it (the command traced with `+ `, then stdout and stderr), to
# test/fixtures/eval/parser-logs/. Then run gen-expected.py to get the harness's status maps of them.
# Needs: golang-go, cargo, ruby + ruby-rspec, phpunit, libgtest-dev, doctest-dev, g++, jq, chromium, and an npm folder
# with jest, vitest, mocha, karma and its plugins installed (NPM_TOOLS, default /tmp/parser-logs-npm; see README.md).
# Not run by the test suite.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$HERE/../../test/fixtures/eval/parser-logs"
WORK="$(mktemp -d /tmp/parser-logs-XXXXXX)"
NPM_TOOLS="${NPM_TOOLS:-/tmp/parser-logs-npm}"
mkdir -p "$OUT"
export GOFLAGS=-mod=mod GOPROXY=off GOCACHE="$WORK/gocache" GOPATH="$WORK/gopath" CARGO_NET_OFFLINE=true

# run <log name> <directory> <command...>: the command's output after its `+ ` trace line.
run() {
  local name="$1" dir="$2"
  shift 2
  { echo "+ $*"; (cd "$dir" && "$@" 2>&1); } > "$OUT/$name.log"
  echo "$name: exit $?" >&2
}

# A copy of a project folder in the work folder, with the npm tools linked in as its node_modules.
project() {
  cp -r "$HERE/$1" "$WORK/$2"
  [ -d "$NPM_TOOLS/node_modules" ] && ln -s "$NPM_TOOLS/node_modules" "$WORK/$2/node_modules"
  echo "$WORK/$2"
}

# Go: go test -v (pass, fail, skip, subtests, parallel output, a panic, a build error, repeated runs).
G="$(project go go)"
run go-calc "$G" go test -v ./calc
run go-crash "$G" go test -v ./crash
run go-build-error "$G" go test -v ./broken
run go-all "$G" go test -v ./...
run go-count "$G" go test -v -count=2 -run 'TestTable|TestNested' ./calc

# Rust: cargo test (lib, integration and doc tests; captured and not; colours; an aborted binary; a build error).
R="$(project rust rust)"
export CARGO_TARGET_DIR="$WORK/cargo-target"
run cargo-test "$R" cargo test --no-fail-fast
run cargo-nocapture "$R" cargo test --no-fail-fast -- --nocapture --test-threads=4
run cargo-colour "$R" cargo test --no-fail-fast --color=always -- --color=always
run cargo-abort "$R" cargo test --test abort
run cargo-build-error "$R" cargo test --features broken

# Ruby: minitest -v, test-unit -v, RSpec's JSON through jq (as SWE-bench's multilingual specs do).
B="$(project ruby ruby)"
run minitest-verbose "$B" ruby minitest_test.rb -v --seed 7
run minitest-plain "$B" ruby minitest_test.rb --seed 7
run ruby-unit-verbose "$B" ruby unit_test.rb -v
run ruby-unit-plain "$B" ruby unit_test.rb
RSPEC_JQ='.examples[] | "\(.full_description) - \(.status)"'
run rspec-json "$B" bash -c "rspec spec/calc_spec.rb --format json | jq -r '$RSPEC_JQ'"
run rspec-broken "$B" bash -c "rspec --format json | jq -r '$RSPEC_JQ'"
run rspec-documentation "$B" rspec spec/calc_spec.rb --format documentation

# JavaScript: jest (verbose, coloured, default, --json through jq) and vitest (verbose, coloured, default).
J="$(project js/jest jest)"
JEST_JQ='.testResults[].assertionResults[] | "[" + (.status | ascii_upcase) + "] " + ((.ancestorTitles | join(" > ")) + (if (.ancestorTitles | length) > 0 then " > " else "" end) + .title)'
run jest-verbose "$J" ./node_modules/.bin/jest --verbose
run jest-colours "$J" ./node_modules/.bin/jest --verbose --colors
run jest-default "$J" ./node_modules/.bin/jest
run jest-json "$J" bash -c "./node_modules/.bin/jest --json --outputFile=results.json >/dev/null 2>&1; jq -r '$JEST_JQ' results.json"
run jest-one-file "$J" ./node_modules/.bin/jest --verbose --runInBand calc.test.js
V="$(project js/vitest vitest)"
run vitest-verbose "$V" env NO_COLOR=1 ./node_modules/.bin/vitest run --reporter=verbose
run vitest-colours "$V" env FORCE_COLOR=1 ./node_modules/.bin/vitest run --reporter=verbose
run vitest-default "$V" env NO_COLOR=1 ./node_modules/.bin/vitest run
run vitest-one-file "$V" env NO_COLOR=1 ./node_modules/.bin/vitest run --reporter=verbose calc.test.js

# Mocha: spec reporter (plain, coloured), JSON (Prism's and Lighthouse's commands), TAP, a file that does
# not load; Lighthouse's runner prints `running N test files` before mocha's output.
M="$(project js/mocha mocha)"
run mocha-spec "$M" ./node_modules/.bin/mocha test
run mocha-colours "$M" ./node_modules/.bin/mocha --color test
run mocha-prism-json "$M" ./node_modules/.bin/mocha tests/run.js --reporter json
run mocha-json "$M" ./node_modules/.bin/mocha --reporter json
run mocha-lighthouse "$M" bash -c "echo 'running 1 test files'; ./node_modules/.bin/mocha test"
run mocha-tap "$M" ./node_modules/.bin/mocha --reporter tap test
run mocha-broken "$M" ./node_modules/.bin/mocha broken

# TAP from node's own test runner (one file, a crash, both files).
T="$(project js/tap tap)"
run tap-node "$T" node --test --test-reporter=tap basic.test.mjs
run tap-node-crash "$T" node --test --test-reporter=tap crash.test.mjs
run tap-node-all "$T" node --test --test-reporter=tap

# Karma in headless Chromium (mocha, progress and dots reporters, colours, a bundle that throws).
export CHROME_BIN="${CHROME_BIN:-/usr/bin/chromium}"
K="$(project js/karma karma)"
KARMA="timeout 120 ./node_modules/.bin/karma start karma.conf.cjs"
run karma-mocha "$K" $KARMA
run karma-progress "$K" env REPORTER=progress $KARMA
run karma-dots "$K" env REPORTER=dots $KARMA
run karma-colours "$K" env COLOURS=1 $KARMA
run karma-crash "$K" env SPEC=crash.spec.js $KARMA

# PHPUnit 9 (--testdox plain and coloured, the default output, a file that does not parse).
P="$(project php php)"
run phpunit-testdox "$P" phpunit --testdox tests/CalculatorTest.php
run phpunit-testdox-colours "$P" phpunit --testdox --colors=always tests/CalculatorTest.php
run phpunit-testdox-other "$P" phpunit --testdox tests/OtherTest.php
run phpunit-default "$P" phpunit tests/CalculatorTest.php
run phpunit-broken "$P" phpunit --testdox tests/BrokenTest.php

# googletest and doctest (XML reporter as the harness expects; console; a crash mid-run; JUnit XML).
C="$(project cpp cpp)"
(cd "$C" && g++ -std=c++17 -o gtest_calc gtest_calc.cpp -lgtest -lgtest_main -pthread &&
  g++ -std=c++17 -o doctest_calc doctest_calc.cpp)
run googletest "$C" ./gtest_calc
run googletest-crash "$C" env CRASH=1 ./gtest_calc
run googletest-colour "$C" ./gtest_calc --gtest_color=yes
run googletest-repeat "$C" ./gtest_calc --gtest_filter='Calculator.*' --gtest_repeat=2
run googletest-brief "$C" ./gtest_calc --gtest_brief=1
run doctest-xml "$C" ./doctest_calc -s -r=xml
run doctest-console "$C" ./doctest_calc -s
run doctest-filtered "$C" ./doctest_calc -s -r=xml '-tc=ünïcode*'
run doctest-crash "$C" env CRASH=1 ./doctest_calc -s -r=xml
run doctest-junit "$C" ./doctest_calc -s -r=junit

# Logs of suites that do not run here (redis, jq, micropython, Maven, Ant, Gradle, cucumber, project
# scripts), shaped after the harness's parsers, are kept in shaped/ and copied as they are.
cp "$HERE"/shaped/*.log "$OUT/"

# Line-ending variants: CRLF throughout, and a lone CR (a progress line redrawn) in a real log.
sed 's/$/\r/' "$OUT/go-calc.log" > "$OUT/go-calc-crlf.log"
sed 's/$/\r/' "$OUT/jest-verbose.log" > "$OUT/jest-verbose-crlf.log"
sed 's/$/\r/' "$OUT/phpunit-testdox.log" > "$OUT/phpunit-testdox-crlf.log"
sed 's/^test \(.*\) \.\.\. ok$/test \1 ... running\rtest \1 ... ok/' "$OUT/cargo-test.log" > "$OUT/cargo-test-cr.log"
rm -rf "$WORK"
