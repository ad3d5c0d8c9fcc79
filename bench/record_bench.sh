#!/usr/bin/env bash
# `userperf record` against kernel `perf record` and gperftools' CPU profiler, in the same run, on
# the same CPU-bound workload (bench/spin_threads.c) at the same rate:
#   - samples delivered per second of workload CPU (target >= 95% of the requested rate),
#   - CPU added per sample: (CPU of the whole run - CPU of the bare workload) / samples, every
#     process included (recorder, perf, the workload with its signal handlers and ticker),
#     target <= kernel perf's,
#   - lost samples with 2 threads at 1 kHz (target 0).
# Usage: bench/record_bench.sh [BUILD_DIR]   env: RATE (1000) SECONDS_EACH (3) RUNS (3)
# Prints one line per tool and run, then the medians. Not a test: nothing fails on a missed target.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${BUILD:-build}}
[[ $build = /* ]] || build=$root/$build
bin=$build/bin
rate=${RATE:-1000}
seconds=${SECONDS_EACH:-3}
runs=${RUNS:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for f in "$bin/userperf" "$bin/spin_threads"; do
  [[ -x $f ]] || { echo "record_bench.sh: $f missing; build first" >&2; exit 1; }
done
profiler=$(ls /usr/lib/x86_64-linux-gnu/libprofiler.so* 2>/dev/null | head -1 || true)

echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rate $rate Hz, $seconds s of CPU per thread, $runs runs; perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)"

python3 - "$bin" "$dir" "$rate" "$seconds" "$runs" "$profiler" <<'PY'
import os, re, resource, statistics, struct, subprocess, sys
bin_dir, tmp, rate, seconds, runs, profiler = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
spin = os.path.join(bin_dir, "spin_threads")

def run(cmd, env=None):
    """Runs cmd; returns (returncode, CPU seconds of it and its children, stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.returncode, cpu, p.stderr

def perf_samples(path):
    out = subprocess.run(["perf", "script", "-i", path, "-F", "tid"], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return sum(1 for line in out.stdout.splitlines() if line.strip())

def gperf_samples(path):
    # Legacy CPU profile: 5 header words, then {count, npcs, pcs...} until the {0, 1, 0} trailer.
    data = open(path, "rb").read()
    words = struct.unpack("<%dQ" % (len(data) // 8), data[: len(data) // 8 * 8])
    i, total = 5, 0
    while i + 1 < len(words):
        count, npcs = words[i], words[i + 1]
        if count == 0 and npcs == 1:
            break
        total += count
        i += 2 + npcs
    return total

def lost_from_summary(stderr):
    m = re.search(r"(\d+) lost", stderr)
    return int(m.group(1)) if m else None

results = {}
for threads in (1, 2):
    expected = threads * seconds * rate
    for r in range(runs):
        rc, base_cpu, _ = run([spin, str(threads), str(seconds)])
        rows = []
        f = os.path.join(tmp, "u.data")
        rc, cpu, err = run([os.path.join(bin_dir, "userperf"), "record", "-F", str(rate), "-o", f, "--", spin, str(threads), str(seconds)])
        rows.append(("userperf", rc, cpu, perf_samples(f) if rc == 0 else None, lost_from_summary(err)))
        f = os.path.join(tmp, "k.data")
        rc, cpu, err = run(["perf", "record", "-e", "cpu-clock", "-F", str(rate), "-o", f, "--", spin, str(threads), str(seconds)])
        rows.append(("kernel perf", rc, cpu, perf_samples(f) if rc == 0 else None, None))
        if profiler:
            f = os.path.join(tmp, "g.prof")
            env = dict(os.environ, CPUPROFILE=f, CPUPROFILE_FREQUENCY=str(rate), LD_PRELOAD=profiler)
            rc, cpu, err = run([spin, str(threads), str(seconds)], env=env)
            rows.append(("gperftools", rc, cpu, gperf_samples(f) if rc == 0 and os.path.exists(f) else None, None))
        for tool, rc, cpu, samples, lost in rows:
            if rc != 0 or not samples:
                print(f"{threads} thread(s) run {r}: {tool}: failed (exit {rc})")
                continue
            per_s = samples / (threads * seconds)
            added_us = (cpu - base_cpu) / samples * 1e6
            results.setdefault((threads, tool), []).append((per_s, added_us, lost))
            print(f"{threads} thread(s) run {r}: {tool:11s} {samples:6d} samples = {per_s:7.1f}/s per thread "
                  f"({100 * samples / expected:5.1f}% of {rate} Hz); CPU {cpu:.3f} s vs bare {base_cpu:.3f} s: "
                  f"{added_us:7.1f} us added per sample" + (f"; lost {lost}" if lost is not None else ""))
print("\nmedians:")
for (threads, tool), rs in sorted(results.items()):
    lost = [x[2] for x in rs if x[2] is not None]
    print(f"  {threads} thread(s) {tool:11s}: {statistics.median(x[0] for x in rs):7.1f} samples/s per thread "
          f"({100 * statistics.median(x[0] for x in rs) / rate:5.1f}%), "
          f"{statistics.median(x[1] for x in rs):7.1f} us CPU added per sample" + (f", lost max {max(lost)}" if lost else ""))
PY
