#!/usr/bin/env bash
# Builds the three configurations and runs their tests: the main build (every test), ASan+UBSan
# (target asan_tests: every concurrency test and the unit tests of the modules tests/CMakeLists.txt
# names; no kernel conformance), TSan (label "concurrency"). Prints each ctest summary and, last,
# the combined "N passed, N failed" line; exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
status=0
passed=0
failed=0

run_config() {  # dir, label filter ("" = all), build target ("" = all), cmake flags...
  local dir=$1 labels=$2 target=$3
  shift 3
  echo "== configuring $dir"
  # A build directory configured for another compiler cannot be switched in place.
  local cached
  cached=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt" 2>/dev/null)
  [[ -n $cached && $(basename "$cached") != "${CXX:-c++}" ]] && rm -rf "$dir"
  cmake -S . -B "$dir" -G Ninja "$@" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; return 1; }
  echo "== building $dir"
  local build_args=(--build "$dir" -j "$jobs")
  [[ -n $target ]] && build_args+=(--target "$target")
  cmake "${build_args[@]}" >"$dir.build.log" 2>&1 || { tail -50 "$dir.build.log"; return 1; }
  echo "== testing $dir"
  local args=(--test-dir "$dir" --output-on-failure -j "$jobs" --timeout 600)
  [[ -n $labels ]] && args+=(-L "$labels")
  ctest "${args[@]}" | tee "$dir.ctest.log"
  local rc=${PIPESTATUS[0]}
  local line
  line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$dir.ctest.log" | tail -1)
  if [[ $line =~ ([0-9]+)\ tests\ failed\ out\ of\ ([0-9]+) ]]; then
    failed=$((failed + BASH_REMATCH[1]))
    passed=$((passed + BASH_REMATCH[2] - BASH_REMATCH[1]))
  fi
  return "$rc"
}

run_config build "" "" || status=1
# clang, so that the same sanitized libraries carry libFuzzer's instrumentation: asan_tests also
# builds fuzz/'s targets, and ctest runs each (label "fuzz") over its seeds and 20 s of new inputs.
CC=clang CXX=clang++ run_config build-asan "" asan_tests -DUSERPERF_SANITIZE=address \
  -DUSERPERF_TESTS_ONLY=ON || status=1
run_config build-tsan concurrency concurrency_tests -DUSERPERF_SANITIZE=thread \
  -DUSERPERF_TESTS_ONLY=ON || status=1

echo "total: $passed passed, $failed failed"
exit $status
