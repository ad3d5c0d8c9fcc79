#!/usr/bin/env bash
# Per-call cost of function-call tracing: Debian's `uftrace record` against `userperf record --aux
# calltrace`, side by side on the same program (bench/calltrace_program.c: a leaf loop, 600,601
# instrumented calls by default) in the same run:
#   plain      calltrace_program_plain, no instrumentation, no tracer
#   uftrace    uftrace record   calltrace_program_pg      (-pg)
#   sampling   userperf record  calltrace_program_traced  (sampling, and the hooks with no
#              calltrace event: what --aux adds to)
#   userperf   userperf record --aux calltrace  calltrace_program_traced  (-finstrument-functions
#              linked with userperf_calltrace_hooks)
# Each case runs RUNS times, interleaved; the program times its own call loop (CLOCK_MONOTONIC),
# so the tracers' start-up and their writing after the loop are not counted (the whole command's
# wall time is printed too). Per-call overhead = (median loop time - plain's) / calls, and
# userperf/uftrace is the ratio of the two overheads. Both traces are checked: uftrace report must
# count every leaf call, and every userperf sample must carry a decoded calltrace window with leaf
# calls in it (userperf keeps the newest calls in memory and writes the windows samples carry).
# Usage: bench/calltrace_vs_uftrace.sh [BUILD_DIR]   env: RUNS (5) REPS (600)
# Build first: cmake --build BUILD_DIR --target calltrace_vs_uftrace. Needs uftrace
# (scripts/install-deps.sh). Not a test: nothing fails on a missed target, only on a bad trace.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${BUILD:-build-bench}}
[[ $build = /* ]] || build=$root/$build
bin=$build/bin
runs=${RUNS:-5}
reps=${REPS:-600}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for f in userperf calltrace_program_plain calltrace_program_pg calltrace_program_traced; do
  [[ -x $bin/$f ]] || { echo "calltrace_vs_uftrace.sh: $bin/$f missing; build the calltrace_vs_uftrace target" >&2; exit 1; }
done
command -v uftrace >/dev/null || { echo "calltrace_vs_uftrace.sh: uftrace missing (scripts/install-deps.sh)" >&2; exit 1; }

echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$(uftrace --version | head -1); $runs runs of each case, interleaved; REPS=$reps"

python3 - "$bin" "$dir" "$runs" "$reps" <<'PY'
import os, re, statistics, subprocess, sys, time
bin_dir, tmp, runs, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
prog = lambda v: os.path.join(bin_dir, "calltrace_program_" + v)
userperf = os.path.join(bin_dir, "userperf")
cases = {
    "plain": lambda i: [prog("plain"), reps],
    "uftrace": lambda i: ["uftrace", "record", "-d", f"{tmp}/uftrace.{i}", prog("pg"), reps],
    "sampling": lambda i: [userperf, "record", "-q", "-o", f"{tmp}/s.{i}.data", "--", prog("traced"), reps],
    "userperf": lambda i: [userperf, "record", "-q", "--aux", "calltrace", "-o", f"{tmp}/u.{i}.data",
                           "--", prog("traced"), reps],
}
loop, wall, calls = {c: [] for c in cases}, {c: [] for c in cases}, None
for i in range(runs):
    for name, cmd in cases.items():
        t0 = time.monotonic()
        p = subprocess.run(cmd(i), capture_output=True, text=True)
        t1 = time.monotonic()
        m = re.search(r"calls (\d+) loop_ns (\d+)", p.stdout)
        if p.returncode != 0 or not m:
            sys.exit(f"{name}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
        calls = int(m.group(1))
        loop[name].append(int(m.group(2)))
        wall[name].append((t1 - t0) * 1e9)
        print(f"run {i + 1} {name:9s} loop {int(m.group(2)) / 1e6:8.2f} ms   command {(t1 - t0) * 1e3:8.2f} ms")

# The traces: uftrace counted every leaf call; userperf's samples carry decoded windows of calls.
leaf_calls = int(reps) * 1000
rep = subprocess.run(["uftrace", "report", "-d", f"{tmp}/uftrace.0"], capture_output=True, text=True)
m = re.search(r"^\s*\S+ \S+\s+\S+ \S+\s+(\d+)\s+calltrace_leaf_program\s*$", rep.stdout, re.M)
uftrace_leaf = int(m.group(1)) if m else 0
print(f"uftrace report: calltrace_leaf_program called {uftrace_leaf} times (expected {leaf_calls})")
scr = subprocess.run([userperf, "script", "-i", f"{tmp}/u.0.data"], capture_output=True, text=True)
samples = scr.stdout.count("PERF_RECORD_SAMPLE")
decoded = len(re.findall(r"^\s+aux calltrace:", scr.stdout, re.M))
leaves = len(re.findall(r"-> calltrace_leaf_program", scr.stdout))
print(f"userperf script: {samples} samples, {decoded} with a decoded calltrace window, "
      f"{leaves} calltrace_leaf_program entries in them")
ok = uftrace_leaf == leaf_calls and samples > 0 and decoded == samples and leaves >= samples
if not ok:
    print(rep.stdout[-2000:], scr.stderr[-2000:], sep="\n")
    sys.exit("a tracer did not record the calls")

med = {c: statistics.median(v) for c, v in loop.items()}
medw = {c: statistics.median(v) for c, v in wall.items()}
print(f"\n{calls} instrumented calls; medians of {runs} runs")
print(f"{'case':9s} {'loop ms':>9s} {'command ms':>11s} {'ns/call over plain':>19s}")
for c in cases:
    over = (med[c] - med["plain"]) / calls
    print(f"{c:9s} {med[c] / 1e6:9.2f} {medw[c] / 1e6:11.2f} {over:19.1f}")
u = (med["userperf"] - med["plain"]) / calls
f = (med["uftrace"] - med["plain"]) / calls
s = (med["userperf"] - med["sampling"]) / calls
print(f"\nper call: uftrace {f:.1f} ns, userperf {u:.1f} ns ({s:.1f} ns over sampling alone); "
      f"userperf/uftrace = {u / f:.2f}")
PY
