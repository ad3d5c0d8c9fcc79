#!/usr/bin/env bash
# One fuzz target's ctest run: every seed of its corpus once, then SECONDS of fresh fuzzing that
# starts from the seeds. New inputs go to WORKDIR/corpus (never into the tree); a crashing input
# is kept as WORKDIR/crash-* (libFuzzer's artifact) and its path printed.
# Usage: run_target.sh TARGET SEED_DIR SECONDS WORKDIR
set -uo pipefail
target=$1 seeds=$2 seconds=$3 work=$4
name=$(basename "$target")
rm -rf "$work" && mkdir -p "$work/corpus" || exit 1
# ASan's leak checker is on; an input that takes 10 s is a hang (-timeout).
common=(-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/" -print_final_stats=1)

n_seeds=$(find "$seeds" -type f ! -name README.md | wc -l)
((n_seeds > 0)) || { echo "FAIL $name: no seed in $seeds"; exit 1; }
"$target" "${common[@]}" -runs=0 "$seeds" >"$work/seeds.log" 2>&1
rc=$?
if ((rc != 0)); then
  tail -60 "$work/seeds.log"
  echo "FAIL $name: a seed fails (exit $rc; input in $work/)"
  exit 1
fi
echo "$name: $n_seeds seeds run once"

"$target" "${common[@]}" -max_total_time="$seconds" "$work/corpus" "$seeds" >"$work/fuzz.log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -1)
cov=$(grep -o 'cov: [0-9]*' "$work/fuzz.log" | tail -1)
ft=$(grep -o 'ft: [0-9]*' "$work/fuzz.log" | tail -1)
if ((rc != 0)); then
  tail -60 "$work/fuzz.log"
  echo "FAIL $name: fuzzing found a failing input (exit $rc): $(ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* 2>/dev/null | head -3)"
  exit 1
fi
echo "$name: ${seconds} s of fresh fuzzing: ${execs:-?} executions, ${cov:-cov: ?}, ${ft:-ft: ?}, $(find "$work/corpus" -type f | wc -l) new inputs"
