#!/usr/bin/env bash
# The cost of recording a program that starts many short processes: a shell loop running
# /bin/true N times (each iteration a fork of the shell and an exec), bare, under `userperf record`
# (with and without -g) and under kernel `perf record -e cpu-clock -F 1000` (with and without -g),
# in the same run. Prints the CPU (user+sys of the whole run, every process: recorder, perf, the
# shell and its children) of each, its ratio to the bare run, and whether userperf said anything
# on stderr (it must not for ordinary short-lived children).
# Usage: bench/spawn_bench.sh [BUILD_DIR]   env: PROCESSES (800) RUNS (3)
# Not a test: nothing fails on a missed target (<= kernel perf's ratio).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${BUILD:-build}}
[[ $build = /* ]] || build=$root/$build
userperf=$build/bin/userperf
[[ -x $userperf ]] || { echo "spawn_bench.sh: $userperf missing; build first" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "for i in \$(seq ${PROCESSES:-800}); do /bin/true; done" >"$dir/loop.sh"
echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "${PROCESSES:-800} processes, ${RUNS:-3} runs, medians"

python3 - "$userperf" "$dir" "${RUNS:-3}" <<'PY'
import resource, statistics, subprocess, sys
userperf, tmp, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
loop = ["bash", f"{tmp}/loop.sh"]
tools = {
    "bare": loop,
    "userperf record": [userperf, "record", "-q", "-o", f"{tmp}/u.data", "--"] + loop,
    "userperf record -g": [userperf, "record", "-q", "-g", "-o", f"{tmp}/g.data", "--"] + loop,
    "kernel perf record": ["perf", "record", "-q", "-e", "cpu-clock", "-F", "1000", "-o", f"{tmp}/k.data", "--"] + loop,
    "kernel perf record -g": ["perf", "record", "-q", "-g", "-e", "cpu-clock", "-F", "1000", "-o", f"{tmp}/kg.data", "--"] + loop,
}
cpu = {name: [] for name in tools}
said = {name: "" for name in tools}
for _ in range(runs):
    for name, cmd in tools.items():
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            sys.exit(f"{name} exited {p.returncode}: {p.stderr[:300]}")
        cpu[name].append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        if name.startswith("userperf") and p.stderr.strip():
            said[name] = p.stderr.strip().splitlines()[0]
bare = statistics.median(cpu["bare"])
print(f"{'tool':24} {'CPU s':>7} {'x bare':>7}  runs")
for name in tools:
    m = statistics.median(cpu[name])
    runs_text = " ".join(f"{c:.2f}" for c in cpu[name])
    print(f"{name:24} {m:7.2f} {m / bare:7.2f}  {runs_text}" + (f"  stderr: {said[name]}" if said[name] else ""))
PY
