#!/usr/bin/env bash
# What a clang-compiled BPF filter adds to a sample (issue 16's "+5 ns per sample over no filter"),
# measured as docs/benchmarks.md §6b does: per round, the fastest of many randomly interleaved runs
# of each bench_bpf_handler benchmark (this 2-vCPU guest runs a whole binary 1.5-2x slower for
# seconds at a time; the fastest run is the least disturbed one), then the differences within the
# round: the whole overflow path with the BPF filter and with the same filter in C, each minus the
# path without a handler; and the handlers alone (on_overflow called directly).
#
#   bench/bpf_filter_cost.sh [BENCH_BINARY] [ROUNDS]
#     default build/bin/bench_bpf_handler, 9 rounds (about 20 s each)
#
# Prints one line per round and the median of each difference over the rounds. Not a test:
# nothing fails on a slow result.
set -euo pipefail
bench=${1:-build/bin/bench_bpf_handler}
rounds=${2:-9}
[[ -x $bench ]] || {
  echo "no $bench (ninja -C build bench_bpf_handler)" >&2
  exit 2
}
python3 - "$bench" "$rounds" <<'PY'
import json, statistics, subprocess, sys

bench, rounds = sys.argv[1], int(sys.argv[2])

def fastest(pattern, reps):
    out = subprocess.run(
        [bench, f"--benchmark_filter={pattern}", "--benchmark_min_time=0.05",
         f"--benchmark_repetitions={reps}", "--benchmark_enable_random_interleaving=true",
         "--benchmark_format=json"],
        check=True, capture_output=True, text=True).stdout
    best = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"].removeprefix("BM_")
        best[name] = min(best.get(name, float("inf")), b["cpu_time"])
    return best

columns = ("path without handler", "BPF - none", "C - none", "BPF handler", "C handler")
rows = []
print("round  " + "  ".join(f"{c:>20}" for c in columns) + "   (ns, fastest run of each)")
for r in range(rounds):
    path = fastest("BM_Overflow_", 80)
    handler = fastest("BM_Handler_", 20)
    none = path["Overflow_NoHandler"]
    row = (none, path["Overflow_BpfFilter"] - none, path["Overflow_NativeFilter"] - none,
           handler["Handler_BpfFilter"], handler["Handler_NativeFilter"])
    rows.append(row)
    print(f"{r + 1:5}  " + "  ".join(f"{v:>+20.2f}" if 0 < i < 3 else f"{v:>20.2f}"
                                     for i, v in enumerate(row)), flush=True)
medians = [statistics.median(col) for col in zip(*rows)]
print("median " + "  ".join(f"{v:>+20.2f}" if 0 < i < 3 else f"{v:>20.2f}"
                            for i, v in enumerate(medians)))
PY
