# Sourced by the report_*_test.sh scripts, after they set $userperf and $hotspots: test_lib.sh's
# scratch directory, fail() and finish(), and the hotspots example recorded by either recorder.
# shellcheck source=tests/integration/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
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
