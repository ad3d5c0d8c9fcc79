#!/usr/bin/env bash
# What attaching costs a running program (docs/record.md, "Attaching"): bench/stall_probe.c spins
# for 4 s reading the clock and prints the longest gap between two reads. Each run attaches to it
# after 1 s and records until 2 s: nothing (the baseline: the VM's own scheduling gaps), kernel
# `perf record -p` (opens events; the program is never stopped), `gdb -p` (ptrace attach and
# detach, the peer way of stopping it), `userperf record -p` (ptrace, the program's own dlopen of
# the agent, the attach call; then the detach call). Also each tool's wall time for an attach and
# detach around `-- sleep 0.5`.
# Usage: bench/attach_bench.sh [BUILD_DIR]   Not a test: nothing fails.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${BUILD:-build}}
[[ $build = /* ]] || build=$root/$build
userperf=$build/bin/userperf
[[ -x $userperf ]] || { echo "attach_bench.sh: $userperf missing; build first" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc -O2 -o "$dir/stall_probe" "$root/bench/stall_probe.c"
echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
# run NAME COMMAND...: COMMAND gets the probe's pid as its last argument, 1 s into the probe's run.
run() {
  local name=$1
  shift
  "$dir/stall_probe" 4 >"$dir/probe.out" &
  local probe=$!
  sleep 1
  local start end
  start=$(date +%s%N)
  [[ $# -eq 0 ]] || "$@" "$probe" >/dev/null 2>"$dir/tool.err" || echo "  ($name failed: $(tail -1 "$dir/tool.err"))"
  end=$(date +%s%N)
  wait "$probe"
  printf '%-28s %s; the tool took %d ms\n' "$name" "$(cat "$dir/probe.out")" $(((end - start) / 1000000))
}
for round in 1 2 3; do
  echo "== round $round"
  run "nothing"
  if command -v perf >/dev/null; then
    run "perf record -p" sh -c 'perf record -q -o '"$dir"'/k.data -p "$0" -- sleep 0.5'
  fi
  if command -v gdb >/dev/null; then
    run "gdb -p (attach, detach)" sh -c 'gdb -q -batch -p "$0" -ex detach'
  fi
  run "userperf record -p" sh -c "$userperf"' record -q -o '"$dir"'/u.data -p "$0" -- sleep 0.5'
done
