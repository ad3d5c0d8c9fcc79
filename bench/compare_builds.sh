#!/usr/bin/env bash
# Two or more builds of one benchmark binary, alternated, on a noisy machine: each round runs every
# binary once (REPS repetitions), and the result per benchmark and binary is the minimum CPU time
# over all repetitions of all rounds (the run least disturbed by other load; medians move with the
# load average on these 2-vCPU guests, minima much less).
#
#   bench/compare_builds.sh FILTER ROUNDS BINARY...     env: REPS (3)
#   e.g. bench/compare_builds.sh 'Enabled_Tracepoint/' 3 /tmp/before/build-bench/bin/bench_tracepoint \
#          build-bench/bin/bench_tracepoint
#
# Prints "binary benchmark ns", grouped by benchmark. Not a test: nothing fails on a slow result.
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 FILTER ROUNDS BINARY..." >&2
  exit 2
fi
filter=$1
rounds=$2
shift 2
reps=${REPS:-3}
for ((r = 0; r < rounds; ++r)); do
  for b in "$@"; do
    "$b" --benchmark_filter="$filter" --benchmark_repetitions="$reps" --benchmark_format=csv \
      2>/dev/null | grep -v '_mean\|_median\|_stddev\|_cv' |
      awk -F, -v b="$b" 'NR > 1 { gsub(/"/, "", $1); print b, $1, $4 }'
  done
done | awk '{ k = $1 " " $2; if (!(k in m) || $3 < m[k]) m[k] = $3 }
            END { for (k in m) print k, m[k] }' | sort -k2,2 -k1,1
