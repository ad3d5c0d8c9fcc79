#!/usr/bin/env bash
# `userperf report`'s output files against consumers nobody here wrote, on files from userperf
# record and from kernel perf record: folded stacks equal to perf's own
# `perf script report stackcollapse`; an output file is replaced whole or not at all; a corrupt
# input is an error naming its offset.
# Usage: report_formats_test.sh PATH_TO_USERPERF PATH_TO_HOTSPOTS
set -uo pipefail
userperf=$1
hotspots=$2
# shellcheck source=tests/integration/report_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/report_test_lib.sh"

record_both

for name in "${files[@]}"; do
  data=$dir/$name.data
  # perf's stackcollapse.py runs in perf's embedded Python; without it there is nothing to compare.
  if ! perf script report stackcollapse -i "$data" >"$dir/$name.perf.folded" 2>"$dir/script.log"; then
    echo "skip: perf script report stackcollapse: $(tail -1 "$dir/script.log")"
    continue
  fi
  "$userperf" report -i "$data" --format=collapsed -o "$dir/$name.folded" || fail "$name: collapsed"
  if ! diff <(sort "$dir/$name.perf.folded") <(sort "$dir/$name.folded") >"$dir/diff"; then
    fail "$name: folded stacks differ from perf's stackcollapse: $(head -6 "$dir/diff")"
  else
    echo "ok: $name: folded stacks equal perf's stackcollapse ($(wc -l <"$dir/$name.folded") stacks)"
  fi
  grep -q "^hotspots;.*main;hot_parse [0-9]*$" "$dir/$name.folded" ||
    fail "$name: no hotspots;...;main;hot_parse stack"
done

# --diff BASE NEW as a differential flame graph page, through the command line (the page itself is
# checked in a browser by report_flamegraph_browser); other formats are refused, nothing written.
if [[ -e $dir/userperf.data && -e $dir/perf.data ]]; then
  "$userperf" report --diff "$dir/perf.data" "$dir/userperf.data" --format=flamegraph \
    -o "$dir/diff.html" 2>"$dir/err" || fail "diff flame graph: $(cat "$dir/err")"
  grep -q "Differential Flame Graph" "$dir/diff.html" || fail "diff flame graph: no title"
  grep -q "hot_parse" "$dir/diff.html" || fail "diff flame graph: no hot_parse frame"
  "$userperf" report --diff "$dir/perf.data" "$dir/userperf.data" >"$dir/diff.txt" ||
    fail "diff table"
  grep -q "\[\.\] hot_parse" "$dir/diff.txt" || fail "diff table: no hot_parse row: $(head -8 "$dir/diff.txt")"
  if "$userperf" report --diff "$dir/perf.data" "$dir/userperf.data" --format=pprof \
    -o "$dir/diff.pb.gz" 2>"$dir/err"; then
    fail "diff as pprof: exit 0"
  fi
  [[ -e $dir/diff.pb.gz ]] && fail "diff as pprof: a file was written"
  echo "ok: --diff as a flame graph page and as perf diff's table (kernel perf's file as the base)"
fi

# A corrupt input: an error naming the offset, and the previous output left as it was.
[[ -e $dir/userperf.data ]] && {
  echo "previous" >"$dir/out.folded"
  size=$(stat -c %s "$dir/userperf.data")
  head -c $((size / 2)) "$dir/userperf.data" >"$dir/torn.data"
  cp "$dir/userperf.data" "$dir/corrupt.data"
  # The first record's header size (data section at the header's data.offset): 4 is below the
  # header itself, which no record can be.
  offset=$(od -An -t u8 -j 40 -N 8 "$dir/userperf.data" | tr -d ' ')
  printf '\x04\x00' | dd of="$dir/corrupt.data" bs=1 seek=$((offset + 6)) conv=notrunc status=none
  if "$userperf" report -i "$dir/corrupt.data" --format=collapsed -o "$dir/out.folded" \
    2>"$dir/err"; then
    fail "corrupt input: exit 0"
  fi
  grep -q "offset" "$dir/err" || fail "corrupt input: no offset in '$(cat "$dir/err")'"
  [[ $(cat "$dir/out.folded") == previous ]] || fail "corrupt input: the previous output changed"
  grep -q 'out.folded\.' < <(ls "$dir") && fail "a temporary file was left: $(ls "$dir")"
  echo "ok: corrupt input: $(head -1 "$dir/err")"
  "$userperf" report -i "$dir/userperf.data" --format=collapsed -o /nonexistent-dir/x.folded \
    2>"$dir/err" && fail "unwritable output: exit 0"
  grep -q "/nonexistent-dir/x.folded" "$dir/err" || fail "unwritable output: '$(cat "$dir/err")'"
}

finish
