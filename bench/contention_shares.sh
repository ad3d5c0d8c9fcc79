#!/usr/bin/env bash
# How right a profile stays when the recorded program shares its CPUs: examples/hotspots.c (50/30/20
# CPU in three functions), recorded RUNS times with `userperf record -g` and with kernel
# `perf record -e cpu-clock:u -F 1000 -g` beside BUSY busy loops; prints the mean and standard
# deviation of each function's share and of the sample count, and how many runs were more than 5
# points off 50/30/20 (the `record` test's bound). SYSCALL=1 records a variant that also reads its
# CPU clock (a system call) once per round: the case docs/record.md's Limits names.
# Usage: bench/contention_shares.sh [BUILD_DIR]   env: RUNS (10) BUSY (4) SYSCALL (0)
# Not a test: nothing fails.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${BUILD:-build}}
[[ $build = /* ]] || build=$root/$build
userperf=$build/bin/userperf
[[ -x $userperf ]] || { echo "contention_shares.sh: $userperf missing; build first" >&2; exit 1; }
command -v perf >/dev/null || { echo "contention_shares.sh: no perf" >&2; exit 1; }
dir=$(mktemp -d)
busy_pids=()
trap 'kill "${busy_pids[@]}" 2>/dev/null; rm -rf "$dir"' EXIT
hotspots=$build/bin/hotspots
if [[ ${SYSCALL:-0} == 1 ]]; then
  sed 's/const double now = seconds_of(CLOCK_MONOTONIC);/&\n    (void)seconds_of(CLOCK_PROCESS_CPUTIME_ID);/' \
    "$root/examples/hotspots.c" >"$dir/hotspots.c"
  grep -q '(void)seconds_of(CLOCK_PROCESS_CPUTIME_ID)' "$dir/hotspots.c" ||
    { echo "contention_shares.sh: examples/hotspots.c changed; SYSCALL=1 needs updating" >&2; exit 1; }
  cc -O2 -fno-omit-frame-pointer -o "$dir/hotspots" "$dir/hotspots.c"
  hotspots=$dir/hotspots
fi
for _ in $(seq "${BUSY:-4}"); do
  bash -c 'while :; do :; done' &
  busy_pids+=($!)
done
echo "machine: $(nproc) CPUs, kernel $(uname -r); ${BUSY:-4} busy loops; ${RUNS:-10} runs; syscall variant: ${SYSCALL:-0}"
shares() {
  perf report -i "$1" --stdio --no-children --sort sym -g none -q 2>/dev/null |
    awk '{ pct[$NF] = $1 + 0 } END { printf "%.1f %.1f %.1f", pct["hot_parse"], pct["warm_transform"], pct["cool_checksum"] }'
}
for _ in $(seq "${RUNS:-10}"); do
  "$userperf" record -q -g -o "$dir/u.data" -- "$hotspots" 1 cpu >/dev/null
  echo "userperf $(shares "$dir/u.data") $(perf script -i "$dir/u.data" -F period 2>/dev/null | wc -l)"
  perf record -q -e cpu-clock:u -F 1000 -g -o "$dir/k.data" -- "$hotspots" 1 cpu >/dev/null 2>&1
  echo "perf $(shares "$dir/k.data") $(perf script -i "$dir/k.data" -F period 2>/dev/null | wc -l)"
done | awk '
  { k = $1; n[k]++
    for (j = 2; j <= 5; j++) { s[k, j] += $j; q[k, j] += $j * $j }
    off = 0; split("50 30 20", want, " ")
    for (j = 2; j <= 4; j++) { d = $j - want[j - 1]; if (d > 5 || d < -5) off = 1 }
    outside[k] += off }
  END {
    split("hot_parse warm_transform cool_checksum samples", name, " ")
    for (k in n) {
      printf "%-8s", k
      for (j = 2; j <= 5; j++) {
        mu = s[k, j] / n[k]; sd = sqrt(q[k, j] / n[k] - mu * mu); if (sd != sd) sd = 0
        printf "  %s %.1f±%.1f", name[j - 1], mu, sd
      }
      printf "  runs more than 5 points off: %d of %d\n", outside[k], n[k]
    }
  }'
