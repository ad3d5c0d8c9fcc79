#!/usr/bin/env bash
# `userperf record` command line: bad input gets a clear message, a non-zero exit and no output
# file; the command's exit status comes back the way a shell reports it; an earlier output becomes
# FILE.old. Runs without the agent (USERPERF_AGENT points at a file the loader ignores), so it
# checks the recorder's side only.
# Usage: record_cli_test.sh PATH_TO_USERPERF
set -uo pipefail
userperf=$1
# shellcheck source=tests/integration/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

# expect_refusal NAME PATTERN ARGS...: non-zero exit, PATTERN on stderr, no output file.
expect_refusal() {
  local name=$1 pattern=$2
  shift 2
  rm -f "$dir/out.data"
  "$userperf" record -q -o "$dir/out.data" "$@" >"$dir/stdout" 2>"$dir/stderr"
  local rc=$?
  [[ $rc -ne 0 ]] || fail "$name: exit 0"
  grep -q -- "$pattern" "$dir/stderr" || fail "$name: stderr lacks '$pattern': $(head -3 "$dir/stderr")"
  [[ ! -e $dir/out.data ]] || fail "$name: an output file was left"
  echo "ok: $name (exit $rc: $(head -1 "$dir/stderr"))"
}

export USERPERF_AGENT=/dev/null
expect_refusal "unknown event" "unknown event 'cycles'" -e cycles -- true
expect_refusal "bad flag" "bogus" --bogus -- true
expect_refusal "missing command" "no command"
expect_refusal "-F with -c" "" -F 100 -c 1000 -- true
expect_refusal "bad call graph" "lbr" --call-graph lbr -- true
expect_refusal "bad -m" "power of two" -m 3 -- true
expect_refusal "command that does not exist" "cannot run 'no-such-command-xyz'" -- no-such-command-xyz
rm -f "$dir/out.data"
"$userperf" record -q -o /nonexistent-dir/out.data -- true 2>"$dir/stderr"
[[ $? -ne 0 ]] && grep -q "cannot write /nonexistent-dir/out.data" "$dir/stderr" ||
  fail "unwritable output: $(cat "$dir/stderr")"
USERPERF_AGENT=/nonexistent/agent.so "$userperf" record -q -o "$dir/out.data" -- true 2>"$dir/stderr"
[[ $? -ne 0 && ! -e $dir/out.data ]] && grep -q "agent library" "$dir/stderr" ||
  fail "missing agent: $(cat "$dir/stderr")"

# Exit status pass-through, and perf's FILE.old.
"$userperf" record -q -o "$dir/out.data" -- sh -c 'exit 3' 2>/dev/null
rc=$?
[[ $rc -eq 3 ]] || fail "exit status: $rc, expected 3"
echo "previous" >"$dir/out.data.old"
"$userperf" record -q -o "$dir/out.data" -- sh -c 'kill -9 $$' 2>/dev/null
rc=$?
[[ $rc -eq 137 ]] || fail "killed command: $rc, expected 137"
[[ -s $dir/out.data.old ]] && ! grep -q previous "$dir/out.data.old" ||
  fail "the earlier output did not become out.data.old"
"$userperf" record -o "$dir/out.data" -- true 2>"$dir/stderr"
grep -q "Captured and wrote .* MB $dir/out.data (0 samples, 0 lost)" "$dir/stderr" ||
  fail "summary line: $(cat "$dir/stderr")"
if command -v perf >/dev/null; then
  perf report --stdio -i "$dir/out.data" >/dev/null 2>"$dir/perf.err" || fail "perf report on an empty recording"
fi
finish "record CLI: all checks passed"
