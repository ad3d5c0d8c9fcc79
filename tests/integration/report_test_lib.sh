# Sourced by the report_*_test.sh scripts, after they set $userperf and $hotspots: a scratch
# directory ($dir) removed at exit, fail() counting failures, finish() exiting with them, and the
# hotspots example recorded by either recorder.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
finish() {
  if ((failures > 0)); then
    echo "$failures failure(s)" >&2
    exit 1
  fi
  exit 0
}
# record_hotspots userperf|perf OUT [RECORD OPTIONS...]: `userperf record -g`, or kernel
# `perf record -g -F 999`, of one second of hotspots; its output goes to $dir/record.log.
record_hotspots() {
  local recorder=$1 out=$2
  shift 2
  if [[ $recorder == userperf ]]; then
    "$userperf" record -q -g -o "$out" "$@" -- "$hotspots" 1 >>"$dir/record.log" 2>&1
  else
    perf record -q -g -F 999 -o "$out" "$@" -- "$hotspots" 1 >>"$dir/record.log" 2>&1
  fi
}
# The files of both recorders, as $dir/userperf.data and $dir/perf.data, named in `files`; a
# failed userperf record fails the test, a kernel perf record that cannot run here is skipped.
record_both() {
  files=()
  if record_hotspots userperf "$dir/userperf.data" "$@"; then
    files+=(userperf)
  else
    fail "userperf record: $(tail -3 "$dir/record.log")"
  fi
  if record_hotspots perf "$dir/perf.data" "$@"; then
    files+=(perf)
  else
    echo "skip: kernel perf record cannot run here: $(tail -1 "$dir/record.log")"
  fi
}
