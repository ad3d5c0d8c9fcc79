#!/usr/bin/env bash
# `userperf report --format=pprof` read by a decoder nobody here wrote: Google's pprof, built from
# Debian's golang-github-google-pprof-dev with Debian's Go, offline. On files of userperf record -g
# and kernel perf record -g of the hotspots example: the totals of both sample types equal
# userperf report's, the top 10 functions by flat and by cumulative value (pprof -top, -cum) have
# the values of userperf report's self and children columns by symbol (report_hist_dump prints them
# exactly), pprof -traces shows the thread and process labels, -raw the mappings' build ids, and
# pprof's own symbolizer puts the executable's addresses in the report's functions and lines.
# The same comparisons on a synthetic file of many processes and functions over this machine's
# shared objects (bench/synthetic_profile), where unknown addresses of several objects and ties
# are many.
# Usage: report_pprof_test.sh USERPERF HOTSPOTS REPORT_HIST_DUMP WORK_DIR SYNTHETIC_PROFILE
set -uo pipefail
userperf=$1
hotspots=$2
hist_dump=$3
work=$4
synthetic=$5
# shellcheck source=tests/integration/report_test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/report_test_lib.sh"

# pprof from Debian's sources (GOPATH mode: the package installs them under /usr/share/gocode).
pprof=$work/pprof/pprof
gopath=/usr/share/gocode
if [[ ! -x $pprof ]]; then
  if ! command -v go >/dev/null || [[ ! -d $gopath/src/github.com/google/pprof ]]; then
    echo "skip: Google's pprof cannot be built here: needs Debian's golang-go and" \
      "golang-github-google-pprof-dev (scripts/install-deps.sh installs them)"
    exit 77 # ctest's SKIP_RETURN_CODE: shown as skipped, not passed
  fi
  mkdir -p "$work/pprof"
  if ! GO111MODULE=off GOPATH=$gopath GOFLAGS= GOCACHE=$work/pprof/cache GOPROXY=off \
    go build -o "$pprof" github.com/google/pprof >"$dir/go.log" 2>&1; then
    fail "go build github.com/google/pprof: $(tail -5 "$dir/go.log")"
    exit 1
  fi
fi
# pprof must not reach out: no symbolization (the file has its functions), no browser.
export PPROF_TMPDIR=$dir PPROF_BINARY_PATH=/nonexistent
pprof_text() { "$pprof" -symbolize=none "$@" 2>>"$dir/pprof.err"; }

record_both

# Compares pprof -top's rows (NAME<TAB>VALUE) with userperf's (NAME<TAB>VALUE): the totals, and
# the top 10 of each side by value have the same value on the other side (ties at the 10th place
# make the order, not the values, ambiguous). Names both sides give to more than one row (one
# function name in two shared objects) are summed for flat values and left out for cumulative.
compare() {
  local what=$1 ours=$2 theirs=$3 cumulative=$4
  python3 - "$what" "$ours" "$theirs" "$cumulative" <<'PY' || fail "$what"
import sys
what, ours_path, theirs_path, cumulative = sys.argv[1:]
def rows(path):
    values, counts = {}, {}
    for line in open(path):
        name, value = line.rstrip("\n").rsplit("\t", 1)
        values[name] = values.get(name, 0) + int(value)
        counts[name] = counts.get(name, 0) + 1
    if cumulative == "1":
        for name, count in counts.items():
            if count > 1:
                del values[name]
    return values
ours, theirs = rows(ours_path), rows(theirs_path)
bad = []
for side, a, b in (("userperf", ours, theirs), ("pprof", theirs, ours)):
    top = sorted(a.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    for name, value in top:
        if value == 0:
            continue
        if b.get(name) != value:
            bad.append(f"{side}'s top {name!r}: {value} here, {b.get(name)} on the other side")
if bad:
    print(f"FAIL: {what}:", *bad, sep="\n  ", file=sys.stderr)
    sys.exit(1)
top = sorted(ours.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
print(f"ok: {what}: top 10 equal ({', '.join(f'{n} {v}' for n, v in top)}, ...)")
PY
}

# pprof -top's rows as NAME<TAB>VALUE: flat ($1) or cum ($4), the unit suffix dropped.
top_rows() {
  local column=$1
  shift
  pprof_text -top -nodecount=1000000 -nodefraction=0 -edgefraction=0 "$@" |
    awk -v c="$column" 'started { v = $c; sub(/[a-z]+$/, "", v); name = $0;
                                  sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", name);
                                  print name "\t" v }
                        / flat +flat% +sum% +cum +cum%/ { started = 1 }'
}

if "$synthetic" "$dir/synthetic.data" 20000 2000 4 >"$dir/synthetic.log" 2>&1; then
  files+=(synthetic)
else
  fail "synthetic_profile: $(tail -3 "$dir/synthetic.log")"
fi

for name in "${files[@]}"; do
  data=$dir/$name.data
  out=$dir/$name.pb.gz
  if ! "$userperf" report -i "$data" --format=pprof -o "$out" 2>"$dir/report.err"; then
    fail "$name: report --format=pprof: $(cat "$dir/report.err")"
    continue
  fi
  gzip -t "$out" || fail "$name: not gzip"
  "$hist_dump" "$data" >"$dir/$name.hist" || {
    fail "$name: report_hist_dump"
    continue
  }
  read -r _ samples period < <(head -1 "$dir/$name.hist")
  # userperf report's own text agrees with its histogram (the event count it prints).
  grep -q "^# Event count (approx.): $period$" <("$userperf" report -i "$data") ||
    fail "$name: userperf report's event count is not $period"

  # Sample types as the issue names them; the clock's period in ns.
  pprof_text -raw "$out" >"$dir/$name.raw" || fail "$name: pprof -raw cannot read the file"
  grep -q "^PeriodType: cpu nanoseconds" "$dir/$name.raw" || fail "$name: no cpu/nanoseconds"
  grep -q "samples/count cpu/nanoseconds\[dflt\]" "$dir/$name.raw" ||
    fail "$name: sample types: $(grep -A1 '^Samples:' "$dir/$name.raw" | tail -1)"
  if [[ $name != synthetic ]]; then
    build_id=$(sed -n '/^Mappings/,$p' "$dir/$name.raw" | grep -m1 " $hotspots " |
      grep -oE '[0-9a-f]{40}')
    [[ $build_id =~ ^[0-9a-f]{40}$ ]] || fail "$name: hotspots' mapping has no build id"
  fi

  # Totals: pprof -top's "N, 100% of N total" for each sample type.
  for index in samples cpu; do
    expected=$([[ $index == samples ]] && echo "$samples" || echo "$period")
    total=$(pprof_text -top -nodecount=1 -sample_index=$index -unit=ns "$out" |
      sed -n 's/.* of \([0-9.]*\)[a-z]* total.*/\1/p')
    [[ $total == "$expected" ]] || fail "$name: pprof's $index total $total, userperf's $expected"
  done
  echo "ok: $name: totals equal ($samples samples, $period ns)"

  awk -F'\t' '{ print $4 "\t" $1 }' <(tail -n +2 "$dir/$name.hist") >"$dir/ours.samples"
  awk -F'\t' '{ print $4 "\t" $2 }' <(tail -n +2 "$dir/$name.hist") >"$dir/ours.self"
  awk -F'\t' '{ print $4 "\t" $3 }' <(tail -n +2 "$dir/$name.hist") >"$dir/ours.children"
  top_rows 1 -sample_index=samples "$out" >"$dir/theirs.samples"
  top_rows 1 -sample_index=cpu -unit=ns "$out" >"$dir/theirs.flat"
  top_rows 4 -sample_index=cpu -unit=ns -cum "$out" >"$dir/theirs.cum"
  [[ -s $dir/theirs.flat ]] || fail "$name: pprof -top printed no rows: $(cat "$dir/pprof.err")"
  compare "$name: flat samples" "$dir/ours.samples" "$dir/theirs.samples" 0
  compare "$name: flat cpu (self)" "$dir/ours.self" "$dir/theirs.flat" 0
  compare "$name: cum cpu (children)" "$dir/ours.children" "$dir/theirs.cum" 1

  # Samples with their labels (one of each per trace), and the example's functions on one trace.
  pprof_text -traces "$out" >"$dir/$name.traces" || fail "$name: pprof -traces"
  # A separator line before each trace and one after the last.
  traces=$(($(grep -c "^-----------+" "$dir/$name.traces") - 1))
  before=$failures
  for label in "comm: +[^ ]+" "pid: +[0-9]+" "thread: +[0-9]+"; do
    count=$(grep -Ec "^ +$label$" "$dir/$name.traces")
    ((count == traces && traces > 0)) ||
      fail "$name: label '$label' on $count of $traces traces of pprof -traces"
  done
  [[ $name == synthetic ]] && continue
  # DWARF lines: hot_parse's Locations name hotspots.c, lines inside its body, and its Function
  # the line where the source defines it.
  read -r source line start < <(sed -n 's/^ *[0-9]*: 0x[0-9a-f]* M=[0-9]* hot_parse \([^ ]*\):\([0-9]*\) s=\([0-9]*\)$/\1 \2 \3/p' \
    "$dir/$name.raw" | head -1)
  defined=$(grep -n "uint64_t hot_parse(" "${source:-/dev/null}" 2>/dev/null | cut -d: -f1)
  if [[ -z $defined || $start != "$defined" || $line -lt 1 ]]; then
    fail "$name: hot_parse at '$source:$line', start line '$start', defined at line '$defined'"
  else
    echo "ok: $name: hot_parse at $(basename "$source"):$line, start_line $start as the source"
  fi
  # The addresses themselves: pprof's own symbolizer (addr2line on the file the mapping names,
  # -symbolize=local:force) puts every Location of hotspots' mapping in the function and on the
  # line the report gave it (pprof adds inline frames: the innermost has the line, the outermost
  # the function).
  pprof_text -symbolize=local:force -raw "$out" >"$dir/$name.resymbolized"
  python3 - "$dir/$name.raw" "$dir/$name.resymbolized" "$name" <<'PY' || fail "$name: resymbolized"
import re, sys
def locations(path):
    found, current, inside = {}, None, False
    for line in open(path):
        if line.startswith("Locations"):
            inside = True
            continue
        if line.startswith("Mappings"):
            break
        if not inside:
            continue
        m = re.match(r" *(\d+): 0x([0-9a-f]+) M=1 (.*) \S*:(\d+) s=\d+$", line)
        if not m and re.match(r" *\d+: 0x", line):  # another mapping's location
            current = None
        elif m:
            current = found[m.group(1)] = [m.group(2), [(m.group(3), int(m.group(4)))]]
        elif current and (m := re.match(r" +(.*) \S*:(\d+) s=\d+$", line)):
            current[1].append((m.group(1), int(m.group(2))))
        else:
            current = None
    return found
ours, theirs = locations(sys.argv[1]), locations(sys.argv[2])
bad = []
for id, (address, lines) in ours.items():
    name, line = lines[0]
    their = theirs.get(id)
    if not their or their[1][-1][0] != name or their[1][0][1] != line:
        bad.append(f"0x{address}: ours {name}:{line}, pprof's {their and their[1]}")
if bad or not ours:
    print("FAIL: resymbolized:", *bad, sep="\n  ", file=sys.stderr)
    sys.exit(1)
print(f"ok: {sys.argv[3]}: pprof's own symbolizer agrees on all {len(ours)} locations of hotspots")
PY
  grep -Eq "^ +comm: +hotspots$" "$dir/$name.traces" || fail "$name: no comm hotspots"
  grep -q "main$" < <(grep -A3 -E "hot_parse$" "$dir/$name.traces") ||
    fail "$name: no trace of main -> hot_parse"
  ((failures == before)) && echo "ok: $name: labels on all $traces traces, build id $build_id"
done

# A file of two events: the first with samples is written, the other named on stderr and in the
# profile's comments.
if perf record -q -g -e page-faults -e cpu-clock -o "$dir/two.data" -- "$hotspots" 1 \
  >"$dir/two.log" 2>&1; then
  "$userperf" report -i "$dir/two.data" --format=pprof -o "$dir/two.pb.gz" 2>"$dir/two.err" ||
    fail "two events: $(cat "$dir/two.err")"
  grep -q "writing event page-faults only, not cpu-clock" "$dir/two.err" ||
    fail "two events: stderr '$(cat "$dir/two.err")'"
  grep -q "^Comment: not in this profile: event cpu-clock" < <(pprof_text -raw "$dir/two.pb.gz") ||
    fail "two events: no comment naming cpu-clock"
  grep -q "^samples/count page-faults/count" < <(pprof_text -raw "$dir/two.pb.gz") ||
    fail "two events: sample types not samples/count page-faults/count"
  echo "ok: two events: page-faults written, cpu-clock named"
fi

# A corrupt input: an error, and the previous output file left as it was, no temporary file.
if [[ -e $dir/userperf.data ]]; then
  echo previous >"$dir/out.pb.gz"
  head -c $(($(stat -c %s "$dir/userperf.data") / 2)) "$dir/userperf.data" >"$dir/torn.data"
  offset=$(od -An -t u8 -j 40 -N 8 "$dir/userperf.data" | tr -d ' ')
  printf '\x04\x00' | dd of="$dir/torn.data" bs=1 seek=$((offset + 6)) conv=notrunc status=none
  "$userperf" report -i "$dir/torn.data" --format=pprof -o "$dir/out.pb.gz" 2>"$dir/err" &&
    fail "corrupt input: exit 0"
  [[ $(cat "$dir/out.pb.gz") == previous ]] || fail "corrupt input: the previous output changed"
  grep -q 'out.pb.gz\.' < <(ls "$dir") && fail "a temporary file was left: $(ls "$dir")"
  echo "ok: corrupt input: $(head -1 "$dir/err"); previous output kept"
fi

finish
