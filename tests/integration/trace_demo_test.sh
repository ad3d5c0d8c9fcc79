#!/usr/bin/env bash
# AUX sampling end to end: `userperf trace-demo` writes a perf.data whose task-clock samples carry
# the newest calltrace bytes; `userperf script` must decode them, and for most samples the call
# stack decoded from the trace (the calls whose entry is in the sample's window) must be the
# innermost trace_demo_* frames of the sample's own callchain. perf report / perf script (Debian linux-perf) must read the file cleanly.
# Usage: trace_demo_test.sh USERPERF_BINARY
set -uo pipefail
userperf=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

"$userperf" trace-demo -o "$dir/perf.data" --ms 300 || fail "trace-demo exited $?"
"$userperf" script -i "$dir/perf.data" >"$dir/script.txt" 2>"$dir/script.err" ||
  fail "userperf script exited $?: $(cat "$dir/script.err")"
grep -q 'PERF_RECORD_ITRACE_START' "$dir/script.txt" || fail "no ITRACE_START record"
grep -q '    aux calltrace:' "$dir/script.txt" || fail "no decoded AUX sample"
if grep -q 'aux decode error' "$dir/script.txt"; then fail "a calltrace did not decode"; fi

# Per sample: the callchain's trace_demo_* frames and the decoded stack's, innermost first.
awk '
  function flush() {
    if (chain != "") { total++; if (stack != "" && index(chain ",", stack ",") == 1) same++; else print "differs: chain [" chain "] trace [" stack "]" > "/dev/stderr" }
    chain = ""; stack = ""; in_stack = 0
  }
  /PERF_RECORD_SAMPLE/ {
    flush()
    n = split($0, parts, " <- ")
    for (i = 1; i <= n; i++) if (match(parts[i], / trace_demo_[a-z]+\+/)) {
      name = substr(parts[i], RSTART + 1, RLENGTH - 2)
      if (name != "trace_demo_burn") chain = chain (chain == "" ? "" : ",") name
    }
    next
  }
  /call stack at the end/ { in_stack = 1; next }
  in_stack && /^        / {
    if (match($0, /^ +trace_demo_[a-z]+/)) {
      name = substr($0, RSTART, RLENGTH); gsub(/ /, "", name)
      if (name != "trace_demo_burn") stack = stack (stack == "" ? "" : ",") name
    }
    next
  }
  { in_stack = 0 }
  END { flush(); printf "%d %d\n", same, total }
' "$dir/script.txt" >"$dir/match.txt" 2>"$dir/differs.txt"
read -r same total <"$dir/match.txt"
echo "decoded call stack matches the sample's callchain in $same of $total samples"
((total >= 10)) || fail "only $total samples inside the workload"
((same * 10 >= total * 8)) || { head -5 "$dir/differs.txt"; fail "fewer than 80% agree"; }

if ! command -v perf >/dev/null; then
  echo "perf not installed: perf report / perf script not checked"
  exit 0
fi
grep -qx calltrace < <(perf evlist -i "$dir/perf.data") || fail "perf does not name the calltrace event (EVENT_DESC)"
perf report --stdio -i "$dir/perf.data" >"$dir/report.txt" 2>"$dir/report.err" ||
  fail "perf report exited $?: $(cat "$dir/report.err")"
grep -q 'trace_demo_compute' "$dir/report.txt" || fail "perf report does not show the workload"
perf script -i "$dir/perf.data" >"$dir/perf-script.txt" 2>"$dir/perf-script.err" ||
  fail "perf script exited $?: $(cat "$dir/perf-script.err")"
grep -q 'trace_demo_' "$dir/perf-script.txt" || fail "perf script does not show the workload"
if grep -qiE 'failed|error|invalid' "$dir/report.err" "$dir/perf-script.err"; then
  cat "$dir/report.err" "$dir/perf-script.err"
  fail "perf complained"
fi
echo "perf report and perf script read the file"
