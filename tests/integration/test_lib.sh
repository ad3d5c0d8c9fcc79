# shellcheck shell=bash
# Sourced by the integration test scripts: a scratch directory ($dir) removed at exit, fail()
# counting failures, and finish [MESSAGE] exiting 1 after any failure, else printing MESSAGE and
# exiting 0.
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
  [[ -z ${1:-} ]] || echo "$1"
  exit 0
}
