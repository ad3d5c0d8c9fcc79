#!/usr/bin/env bash
# The cost --off-cpu adds to calls that do not block (docs/record.md, "Off-CPU time"): each run of
# bench/offcpu_calls.c times libc's own read/write/poll, pthread_mutex_lock of a free mutex and
# sem_wait of a posted semaphore (the in-run baseline, reached through dlsym on libc.so.6) against
# the names the program links, which are the agent's wrappers when it is preloaded. Runs: bare
# (both are libc's), under `userperf record` (wrappers, no offcpu-time event: the TLS load and
# branch) and under `userperf record --off-cpu` (wrappers timing each call; the mutex wrapper
# tries the lock first and reads no clock when it gets it).
# Usage: bench/offcpu_bench.sh [BUILD_DIR]   env: CALLS (200000)
# Not a test: nothing fails on a missed target (<= 50 ns per call).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${BUILD:-build}}
[[ $build = /* ]] || build=$root/$build
userperf=$build/bin/userperf
[[ -x $userperf ]] || { echo "offcpu_bench.sh: $userperf missing; build first" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc -O2 -o "$dir/offcpu_calls" "$root/bench/offcpu_calls.c" -ldl -pthread
echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== bare"
"$dir/offcpu_calls" "${CALLS:-200000}"
echo "== userperf record (no --off-cpu)"
"$userperf" record -q -o "$dir/a.data" -- "$dir/offcpu_calls" "${CALLS:-200000}"
echo "== userperf record --off-cpu -g"
"$userperf" record -q --off-cpu -g -o "$dir/b.data" -- "$dir/offcpu_calls" "${CALLS:-200000}"
