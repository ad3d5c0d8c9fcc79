#!/usr/bin/env bash
# Installs the Debian packages userperf needs, only those missing (idempotent).
# Runs as root on CI and developer machines; prints what it installs.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  linux-libc-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  clang-format
  libcli11-dev
  libbpf-dev libelf-dev libdw-dev zlib1g-dev clang llvm lld
  libclang-rt-14-dev  # libFuzzer and the sanitizer runtimes of the clang ASan+UBSan build (fuzz/)
  linux-perf libgoogle-perftools4 uftrace
  xz-utils sqlite3 time procps
  python3  # tests/integration: pprof decoding checks, callgraph_ties.py
  # cli_report_pprof builds Google's pprof from its Debian sources (offline, GOPATH mode)
  golang-go golang-github-google-pprof-dev
  nodejs chromium  # the flame graph page checked in a headless browser (report_flamegraph_browser)
)
missing=()
for p in "${packages[@]}"; do
  if ! grep -q 'install ok installed' < <(dpkg-query -W -f='${Status}' "$p" 2>/dev/null); then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: need root to install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
