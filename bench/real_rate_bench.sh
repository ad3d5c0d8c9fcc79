#!/usr/bin/env bash
# Samples delivered on programs nobody here wrote, `userperf record -F 1000` against kernel
# `perf record -F 1000` (cpu-clock: user and kernel mode; cpu-clock:u: user mode, which is what
# userperf samples), in the same run:
#   xz -T2 (its workers block every signal), python3 (an interpreter loop), g++ -O2 (one
#   translation unit of this project), make -j2 (four C files compiled by two jobs: many short
#   processes), sqlite3 (300k pread/pwrite calls a second).
# For each: samples per second of the recorded program's own CPU time (/usr/bin/time runs it inside
# the recording, so the recorder, perf and the profilers' own threads are not counted, the agent's
# signal handlers are): user+sys for cpu-clock and userperf (it samples the thread CPU-time clock; a
# tick that finds the thread in the kernel takes no sample), user for cpu-clock:u; and PERIOD weight
# per CPU second (sum of PERIOD in seconds over that time: what a PERIOD-weighted report covers).
# Usage: bench/real_rate_bench.sh [BUILD_DIR]   env: RUNS (3)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${BUILD:-build}}
[[ $build = /* ]] || build=$root/$build
userperf=$build/bin/userperf
[[ -x $userperf ]] || { echo "real_rate_bench.sh: $userperf missing; build first" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
awk 'BEGIN { srand(7); n = split("the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were her she there been one all we their", w, " ")
  for (i = 0; i < 120000; i++) { line = ""; for (j = 0; j < 8; j++) line = line w[int(rand() * n) + 1] " "; print line int(rand() * 100000) } }' >"$dir/words.txt"
cat >"$dir/work.py" <<'PY'
import json
d = {}
for i in range(400000):
    d[str(i)] = [i, i * 2, str(i * 3)]
s = json.dumps(d)
print(len(json.loads(s)))
PY
mkdir -p "$dir/make"
for i in 1 2 3 4; do
  awk -v n=$i 'BEGIN { for (f = 0; f < 300; f++) printf "int f%d_%d(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * %d ^ (s >> 3); return s; }\n", n, f, f }' >"$dir/make/u$i.c"
done
printf 'all: u1.o u2.o u3.o u4.o\n%%.o: %%.c\n\tgcc -O2 -c $< -o $@\n' >"$dir/make/Makefile"
{
  echo "PRAGMA cache_size=-64; PRAGMA temp_store=FILE;"
  echo "CREATE TABLE t(a INTEGER, b INTEGER, c TEXT);"
  echo "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i < 400000)"
  echo "INSERT INTO t SELECT i, i % 1000, printf('row-%08d', i * 7919 % 400000) FROM s;"
  echo "SELECT b, count(*), sum(a), max(c) FROM t GROUP BY b ORDER BY 2 DESC LIMIT 3;"
  echo "SELECT c, count(*) FROM t GROUP BY c ORDER BY c LIMIT 3;"
} >"$dir/q.sql"
echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$userperf" "$dir" "${RUNS:-3}" "$root" <<'PY'
import os, resource, statistics, subprocess, sys
userperf, tmp, runs, root = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
programs = {
    "xz -T2": (["xz", "-T2", "-6", "--block-size=1MiB", "-c", f"{tmp}/words.txt"], None, None),
    "python3": (["python3", f"{tmp}/work.py"], None, None),
    "g++ -O2": (["g++", "-std=c++20", "-O2", "-I", f"{root}/src", "-I", f"{root}/include", "-c",
                 f"{root}/src/core/engine.cpp", "-o", f"{tmp}/engine.o"], None, None),
    "make -j2": (["make", "-s", "-B", "-j2", "-C", f"{tmp}/make"], None, None),
    "sqlite3": (["sqlite3", ":memory:"], f"{tmp}/q.sql", None),
}

def run(cmd, stdin):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(stdin) if stdin else open(os.devnull) as f:
        p = subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"{cmd[:3]} exited {p.returncode}: {p.stderr[:300]}")
    return after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime

def samples(path):
    out = subprocess.run(["perf", "script", "-i", path, "-F", "period"], capture_output=True, text=True)
    periods = [int(x) for x in out.stdout.split()]
    return len(periods), sum(periods)

print(f"{'program':10} {'user+sys s':>12} | {'userperf':>16} | {'perf cpu-clock:u':>16} | {'perf cpu-clock':>16}")
print(f"{'':10} {'':>12} | {'smp/s  weight':>16} | {'smp/s  weight':>16} | {'smp/s  weight':>16}")
recorders = (("u", [userperf, "record", "-q", "-F", "1000", "-o", f"{tmp}/u.data", "--"]),
             ("ku", ["perf", "record", "-q", "-e", "cpu-clock:u", "-F", "1000", "-o", f"{tmp}/ku.data", "--"]),
             ("k", ["perf", "record", "-q", "-e", "cpu-clock", "-F", "1000", "-o", f"{tmp}/k.data", "--"]))
for name, (cmd, stdin, _) in programs.items():
    rates = {k: [] for k, _ in recorders}
    weights = {k: [] for k, _ in recorders}
    cpu_text = ""
    for _ in range(runs):
        for key, rec in recorders:
            run(rec + ["/usr/bin/time", "-f", "%U %S", "-o", f"{tmp}/time.txt"] + cmd, stdin)
            user, system = (float(x) for x in open(f"{tmp}/time.txt").read().split()[-2:])
            base = user if key == "ku" else user + system
            if key == "u":
                cpu_text = f"{user:.2f}+{system:.2f}"
            n, w = samples(f"{tmp}/{key}.data")
            rates[key].append(n / base)
            weights[key].append(w / 1e9 / base)
    cells = " | ".join(f"{statistics.median(rates[k]):6.0f} {statistics.median(weights[k]):8.2f}" for k, _ in recorders)
    print(f"{name:10} {cpu_text:>12} | {cells}")
PY
