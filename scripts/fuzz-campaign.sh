#!/usr/bin/env bash
# make fuzz FUZZ_SECONDS=N [FUZZ_TARGETS="perfdata ..."] [FUZZ_JOBS=J] [FUZZ_LANE=L]: long
# campaigns. FUZZ_LANE names a second run of a target already running (its own log,
# <name>.L.log, and the same corpus, which libFuzzer shares by reloading it). Builds the
# clang ASan+UBSan configuration (build-asan, as make test does) and runs each libFuzzer target for N
# seconds on a corpus kept across campaigns (build-asan/fuzz-corpus/<name>, seeded from
# fuzz/corpus/<name>), J targets at a time; then the verifier soundness campaign for N seconds
# (fuzz/soundness, main build; FUZZ_TARGETS=soundness alone runs only it). Each run appends one line to build-asan/fuzz-campaigns.log:
# date, target, seconds, executions, coverage, corpus size, result. A crash stops that target, keeps
# its input (build-asan/fuzz-corpus/<name>.crash-*) and makes the script exit non-zero.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-600}
jobs=${FUZZ_JOBS:-$(nproc)}
dir=build-asan
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DUSERPERF_SANITIZE=address -DUSERPERF_TESTS_ONLY=ON \
  >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" -j "$(nproc)" --target fuzz_targets >"$dir.build.log" 2>&1 ||
  { tail -50 "$dir.build.log"; exit 1; }
targets=${FUZZ_TARGETS:-$(cd fuzz && ls ./*_fuzzer.cpp | sed 's#^\./##; s#_fuzzer\.cpp$##')}
log=$dir/fuzz-campaigns.log

campaign() {  # name
  local name=$1 corpus=$dir/fuzz-corpus/$1 out=$dir/fuzz-corpus/$1${FUZZ_LANE:+.$FUZZ_LANE}.log
  mkdir -p "$corpus"
  "$dir/bin/fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/fuzz-corpus/$name${FUZZ_LANE:+.$FUZZ_LANE}." \
    "$corpus" "fuzz/corpus/$name" \
    >"$out" 2>&1
  local rc=$?
  local execs cov ft
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$out" | tail -1)
  ft=$(grep -o 'ft: [0-9]*' "$out" | tail -1)
  local result=ok
  ((rc == 0)) || result="FAILED (exit $rc; $(ls "$dir/fuzz-corpus/$name".crash-* "$dir/fuzz-corpus/$name".leak-* \
    "$dir/fuzz-corpus/$name".timeout-* "$dir/fuzz-corpus/$name".oom-* 2>/dev/null | head -1))"
  printf '%s %s %ss execs=%s %s %s corpus=%s %s\n' "$(date -u +%FT%TZ)" "$name" "$seconds" \
    "${execs:-?}" "${cov:-cov: ?}" "${ft:-ft: ?}" "$(find "$corpus" -type f | wc -l)" "$result" |
    tee -a "$log"
  [[ $result == ok ]]
}

status=0
running=0
for name in $targets; do
  [[ $name == soundness ]] && continue
  campaign "$name" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while ((running > 0)); do
  wait -n || status=1
  running=$((running - 1))
done

# The verifier soundness campaign (main build; --kernel compares every verdict with bpf(2)'s):
# a random seed per campaign, printed in its log so that each finding reproduces.
if [[ -z ${FUZZ_TARGETS:-} || " $targets " == *" soundness "* ]]; then
  cmake -S . -B build -G Ninja >build.configure.log 2>&1 &&
    cmake --build build -j "$(nproc)" --target verifier_soundness >build.soundness.log 2>&1 ||
    { tail -50 build.soundness.log; exit 1; }
  out=$dir/fuzz-corpus/soundness.log
  mkdir -p "$dir/fuzz-corpus/soundness-findings"
  build/bin/verifier_soundness --seconds "$seconds" --kernel \
    --save-dir "$dir/fuzz-corpus/soundness-findings" >"$out" 2>&1
  rc=$?
  printf '%s soundness %ss %s %s\n' "$(date -u +%FT%TZ)" "$seconds" \
    "$(grep -E '^(verifier_soundness: seed|programs )' "$out" | tr '\n' ' ')" \
    "$( ((rc == 0)) && echo ok || echo "FAILED (exit $rc; $out)")" | tee -a "$log"
  ((rc == 0)) || status=1
fi
exit $status
