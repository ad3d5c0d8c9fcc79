#!/usr/bin/env bash
# `userperf report`'s text against `perf report --stdio`'s on the same files — one of userperf
# record -g and one of kernel perf record -g — with the options users pass: --children and
# --no-children, -g graph/fractal/flat/folded/none with caller and callee orders and thresholds,
# --sort keys, the filters, --percent-limit; and `userperf report --diff` against `perf diff`.
# A third file, written by hand (report_edge_profile), holds the frames kernel perf records only
# now and then: a frame-pointer walk that left the stack, code no MMAP announced, a low address.
# Equal text is asked for, line by line, after leaving out what perf alone prints (its hint
# about --header, its random tip, trailing blank and "#" lines) and two perf quirks: "[...]
# (inlined)", the fractal remainder's uninitialised inlined flag; and "[k]" before an unmapped
# user address (below the kernel's half), which is the level of whichever frame perf's
# fill_callchain_info looked at before it, as it leaves the level of a frame with no map unset.
# Siblings of equal share may come in another order (callgraph_ties.py: perf takes it from heap
# addresses), which the ok line then shows. Where a line differs the test says which.
# Usage: report_text_test.sh PATH_TO_USERPERF PATH_TO_HOTSPOTS PATH_TO_REPORT_EDGE_PROFILE
set -uo pipefail
userperf=$1
hotspots=$2
edge_profile=$3
# shellcheck source=tests/integration/report_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/report_test_lib.sh"
if ! command -v perf >/dev/null; then
  echo "skip: no perf installed"
  exit 0
fi

normalize() {
  grep -v '^# To display the perf.data header info' | sed '/^# (Tip/,$d' |
    sed -e 's/--\[\.\.\.\] (inlined)$/--[...]/' -e 's/\[k\] \(0x[0-7][0-9a-f]\{15\}\|0\{16\}\)$/[.] \1/' |
    awk '{ line[NR] = $0 } END { n = NR; while (n > 0 && (line[n] == "" || line[n] == "#")) n--
                                 for (i = 1; i <= n; i++) print line[i] }'
}

# compare NAME FILE OPTIONS...: both reports of FILE with OPTIONS, equal or a failure.
compare() {
  local name=$1 file=$2
  shift 2
  perf report -i "$file" --stdio "$@" 2>/dev/null | normalize >"$dir/perf.txt"
  "$userperf" report -i "$file" "$@" 2>"$dir/err" | normalize >"$dir/userperf.txt"
  if diff "$dir/perf.txt" "$dir/userperf.txt" >"$dir/diff"; then
    echo "ok: $name: $* ($(grep -c '%' "$dir/perf.txt") lines with shares)"
  elif python3 "$(dirname "${BASH_SOURCE[0]}")/callgraph_ties.py" "$dir/perf.txt" "$dir/userperf.txt"; then
    # perf orders call-graph siblings of equal share by the heap addresses of its dso objects.
    echo "ok: $name: $* (equal but for the order of equal-share siblings: $(head -4 "$dir/diff" | tr '\n' ' '))"
  else
    fail "$name: userperf report $* differs from perf report in $(grep -c '^[<>]' "$dir/diff") lines: $(head -8 "$dir/diff")"
  fi
}

record_both -e cpu-clock
symbol() { nm "$hotspots" | awk -v name="$1" '$3 == name { print $1 }'; }
if "$edge_profile" "$dir/edge.data" "$hotspots" "$(symbol main)" "$(symbol hot_parse)" \
  "$(symbol cool_checksum)"; then
  files+=(edge)
else
  fail "report_edge_profile could not write its file"
fi
# A second kernel perf file, the other side of --diff.
[[ -e $dir/perf.data ]] && record_hotspots perf "$dir/perf2.data" -e cpu-clock

for name in "${files[@]}"; do
  data=$dir/$name.data
  comm=$(basename "$hotspots")
  for options in "" "--children" "--no-children" "-g caller" "-g callee" "--no-children -g caller" \
    "-g fractal" "--no-children -g fractal,2" "-g graph,2,callee" "--no-children -g flat" \
    "--no-children -g folded" "-g none" "--sort dso,sym" "--no-children --sort dso,sym" \
    "--sort sym" "--sort pid" "--sort comm,pid -g none" "--comm $comm" "--comm $comm,nothing" \
    "--no-children --comm $comm --percentage relative" "--percent-limit 5" \
    "--no-children --percent-limit 10 -g none" "--no-children --dso $comm" \
    "--no-children --symbols hot_parse,cool_checksum" "--max-stack 3 --no-children"; do
    # shellcheck disable=SC2086
    compare "$name" "$data" $options
  done
done

# A file of two events: a section per event, perf's lost-samples line once above them.
if record_hotspots perf "$dir/two.data" -e cpu-clock,task-clock; then
  compare two-events "$dir/two.data"
  compare two-events "$dir/two.data" --no-children -g none
fi

# perf diff's table: the two kernel perf files both ways.
if [[ -e $dir/perf2.data ]]; then
  for pair in "perf perf2" "perf2 perf"; do
    read -r base new <<<"$pair"
    perf diff "$dir/$base.data" "$dir/$new.data" 2>/dev/null >"$dir/perf.txt"
    "$userperf" report --diff "$dir/$base.data" "$dir/$new.data" >"$dir/userperf.txt" 2>"$dir/err"
    if ! diff "$dir/perf.txt" "$dir/userperf.txt" >"$dir/diff"; then
      fail "diff $pair: differs from perf diff: $(head -8 "$dir/diff")"
    else
      echo "ok: --diff $pair equals perf diff ($(grep -c '%' "$dir/perf.txt") rows)"
    fi
  done
fi

finish
