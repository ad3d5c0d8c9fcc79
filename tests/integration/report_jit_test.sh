#!/usr/bin/env bash
# JIT frames named from the JIT's /tmp/perf-PID.map: Node's `--perf-basic-prof` running a hot
# JavaScript function (jit_hot_loop.js), recorded by `userperf record -g` and, where it may run,
# by kernel `perf record -g`. The function's name must carry most samples, in the dso perf calls
# "[JIT] tid PID", in `perf report --stdio` of userperf's file (the recorder's //anon MMAP2s) and
# in `userperf report` of both files; without the map each address is a row named by the address,
# as perf report's top rows, and the report still succeeds. The maps Node leaves in /tmp are removed, and its v8 logs with the scratch dir.
# Usage: report_jit_test.sh PATH_TO_USERPERF
# Exits 77 (skipped) without node.
set -uo pipefail
userperf=$(realpath "$1")
script=$(realpath "$(dirname "${BASH_SOURCE[0]}")/jit_hot_loop.js")
# shellcheck source=tests/integration/report_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/report_test_lib.sh"
if ! command -v node >/dev/null; then
  echo "skip: no node installed (Debian's nodejs)"
  exit 77
fi
maps=()
trap 'rm -rf "$dir"; rm -f "${maps[@]}"' EXIT

function_name=userperfJitHotLoop
# share FILE REPORT_COMMAND...: the summed share of the rows naming the function in
# "[JIT] tid PID" (perf has a row per symbol, and V8 may log the function twice) in the
# --no-children table, as an integer percent.
share() {
  local pid=$1
  shift
  "$@" --stdio --no-children -g none 2>"$dir/report.err" |
    awk -v name="$function_name" -v dso="[JIT] tid $pid" '
      !/^#/ && index($0, name) && index($0, dso) { sub("%", "", $1); sum += $1 }
      END { printf "%d\n", sum }'
}

# record RECORDER OUT: the hot loop recorded; its pid (whose map to read and remove) in $pid.
# Node runs in $dir: --perf-basic-prof also writes isolate-*-v8.log files where it runs.
record() {
  local recorder=$1 out=$2
  rm -f "$dir/pid"
  local command=(node --perf-basic-prof "$script" "$dir/pid" 1.5)
  if [[ $recorder == userperf ]]; then
    (cd "$dir" && "$userperf" record -q -g -o "$out" -- "${command[@]}" >>"$dir/record.log" 2>&1)
  else
    (cd "$dir" && perf record -q -g -o "$out" -- "${command[@]}" >>"$dir/record.log" 2>&1)
  fi
  local status=$?
  pid=$(cat "$dir/pid" 2>/dev/null)
  [[ -n $pid ]] && maps+=("/tmp/perf-$pid.map")
  return $status
}

check_share() {
  local what=$1 value=$2
  if ((value < 50)); then
    fail "$what: $function_name has $value% in [JIT] tid $pid, not at least 50% ($(cat "$dir/report.err"))"
  else
    echo "ok: $what: $function_name $value%"
  fi
}

if ! record userperf "$dir/userperf.data" || [[ -z $pid ]]; then
  fail "userperf record: $(tail -3 "$dir/record.log")"
  finish
fi
userperf_pid=$pid
if [[ ! -s /tmp/perf-$pid.map ]]; then
  fail "node wrote no /tmp/perf-$pid.map"
  finish
fi
check_share "userperf report of userperf's file" "$(share "$pid" "$userperf" report -i "$dir/userperf.data")"
if command -v perf >/dev/null; then
  check_share "perf report of userperf's file" "$(share "$pid" perf report -i "$dir/userperf.data")"
else
  echo "skip: no perf installed to read userperf's file"
fi
# The call graph names it too. (Through a file: grep -q leaving early would fail the pipeline.)
"$userperf" report -i "$dir/userperf.data" --stdio -g >"$dir/graph.txt" 2>&1
if ! grep -q "$function_name" "$dir/graph.txt"; then
  fail "userperf report -g: no $function_name in the call graph"
fi
# userperf script names the frames as perf script does: "name+0xoff (/tmp/perf-PID.map)".
"$userperf" script -i "$dir/userperf.data" >"$dir/script.txt" 2>&1
if ! grep -q "${function_name}[^(]*+0x[0-9a-f]* (/tmp/perf-$pid.map)" "$dir/script.txt"; then
  fail "userperf script: no '$function_name...+0x... (/tmp/perf-$pid.map)' frame"
fi

if command -v perf >/dev/null && record perf "$dir/perf.data" && [[ -n $pid ]]; then
  check_share "userperf report of kernel perf's file" "$(share "$pid" "$userperf" report -i "$dir/perf.data")"
else
  echo "skip: kernel perf record cannot run here: $(tail -1 "$dir/record.log")"
fi

# A malformed line is skipped and said on stderr; the other lines still name the code.
printf 'not a map line\n0x10 20 prefixed\n' >>"/tmp/perf-$userperf_pid.map"
pid=$userperf_pid
check_share "userperf report with 2 malformed lines" "$(share "$pid" "$userperf" report -i "$dir/userperf.data")"
if ! grep -q "^userperf report: /tmp/perf-$pid.map: 2 malformed lines skipped$" "$dir/report.err"; then
  fail "userperf report did not say the map's 2 malformed lines: $(cat "$dir/report.err")"
fi

# Without its map the JIT's code has no names: each address is a row named by the address, as
# in perf report, and the report succeeds.
rm -f "/tmp/perf-$userperf_pid.map"
if ! "$userperf" report -i "$dir/userperf.data" --stdio --no-children -g none >"$dir/nomap.txt" 2>&1; then
  fail "userperf report without the map failed: $(tail -1 "$dir/nomap.txt")"
elif grep -q "$function_name" "$dir/nomap.txt" ||
  ! grep -q "\[JIT\] tid $userperf_pid *\[\.\] 0x[0-9a-f]\{16\}$" "$dir/nomap.txt"; then
  fail "userperf report without the map: no [JIT] tid $userperf_pid row named by its address"
elif command -v perf >/dev/null; then
  perf report -i "$dir/userperf.data" --stdio --no-children -g none 2>/dev/null |
    grep "\[JIT\] tid" | head -10 >"$dir/perf_nomap.txt"
  grep "\[JIT\] tid" "$dir/nomap.txt" | head -10 | diff "$dir/perf_nomap.txt" - >"$dir/nomap.diff" ||
    fail "userperf report without the map: its top [JIT] rows differ from perf report's: $(head -6 "$dir/nomap.diff")"
fi
finish
