#!/usr/bin/env bash
# `userperf report` against kernel `perf report --stdio` on the same perf.data files, side by side
# (alternated runs, minimum wall time of each), with each tool's defaults for a file with call
# chains (perf prints its call graphs; so does userperf report). The files are recorded here by
# `userperf record -g` of programs nobody here wrote:
#   python   python3 in a loop (one process, ~30,000 samples at 1 kHz)
#   many     two python3 workers and 200 gcc compiles (200+ processes, ~100,000 samples at 4 kHz)
#   synthetic  1,000,000 samples of 100,000 distinct stacks in 40 processes over this machine's
#            shared objects (bench/synthetic_profile; BIG=1 only, one run: perf report takes
#            minutes and tens of GB on it)
# Usage: bench/report_vs_perf.sh [BUILD_DIR] [FILE.data ...]   env: RUNS (5) BIG (0) KEEP (dir)
# With FILE arguments, those files are compared instead. Not a test: nothing fails on a ratio.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-build}
[[ $build = /* ]] || build=$root/$build
shift || true
userperf=$build/bin/userperf
runs=${RUNS:-5}
[[ -x $userperf ]] || { echo "report_vs_perf.sh: $userperf missing; build first" >&2; exit 1; }
dir=${KEEP:-$(mktemp -d)}
mkdir -p "$dir"
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$dir"' EXIT

files=("$@")
if ((${#files[@]} == 0)); then
  cat >"$dir/work.py" <<'PY'
import json, sys
def squares(n):
    return sum(i * i for i in range(n))
for _ in range(int(sys.argv[1])):
    squares(200000)
    json.dumps([list(range(1000)) for _ in range(100)])
PY
  for i in $(seq 1 40); do
    printf '#include <stdio.h>\nint f%d(int x) { return x * %d; }\nint main(void) { printf("%%d\\n", f%d(3)); return 0; }\n' \
      "$i" "$i" "$i" >"$dir/c$i.c"
  done
  cat >"$dir/many.sh" <<SH
#!/bin/bash
for w in 1 2; do (for k in 1 2 3; do python3 $dir/work.py 150; done) & done
for r in 1 2 3 4 5; do for i in \$(seq 1 40); do gcc -O2 -c $dir/c\$i.c -o $dir/c\$i.o; done; done
wait
SH
  chmod +x "$dir/many.sh"
  echo "recording (userperf record -g) ..."
  "$userperf" record -q -g -F 1000 -o "$dir/python.data" -- python3 "$dir/work.py" 1300 >/dev/null
  "$userperf" record -q -g -F 4000 -o "$dir/many.data" -- "$dir/many.sh" >/dev/null
  files=("$dir/python.data" "$dir/many.data")
  if [[ ${BIG:-0} == 1 ]]; then
    "$build/bin/synthetic_profile" "$dir/synthetic.data" 1000000 100000 40 >/dev/null
    files+=("$dir/synthetic.data")
  fi
fi

echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $runs alternated runs each"
printf '%-14s %10s %10s %12s %12s %8s %10s %10s\n' file MB samples "userperf s" "perf s" ratio \
  "userperf MB" "perf MB"
for file in "${files[@]}"; do
  best_u=999999 best_p=999999 mem_u=0 mem_p=0
  n=$runs
  [[ $(basename "$file") == synthetic.data ]] && n=1
  for ((r = 0; r < n; r++)); do
    /usr/bin/time -f "%e %M" -o "$dir/t" "$userperf" report -i "$file" >"$dir/u.txt" 2>/dev/null
    read -r t m <"$dir/t"
    best_u=$(echo "$t $best_u" | awk '{print ($1 < $2) ? $1 : $2}')
    mem_u=$m
    /usr/bin/time -f "%e %M" -o "$dir/t" perf report -i "$file" --stdio >"$dir/p.txt" 2>/dev/null
    read -r t m <"$dir/t"
    best_p=$(echo "$t $best_p" | awk '{print ($1 < $2) ? $1 : $2}')
    mem_p=$m
  done
  samples=$(grep -m1 "^# Samples:" "$dir/u.txt" | awk '{print $3}')
  mb=$(du -m "$file" | cut -f1)
  printf '%-14s %10s %10s %12s %12s %8s %10s %10s\n' "$(basename "$file")" "$mb" "$samples" \
    "$best_u" "$best_p" "$(echo "$best_u $best_p" | awk '{printf "%.2f", ($2 > 0) ? $1 / $2 : 0}')" \
    "$((mem_u / 1024))" "$((mem_p / 1024))"
done
