#!/usr/bin/env bash
# The installed SDK, used from outside the build: `cmake --install BUILD --prefix TMP`, then
#  - the examples built against TMP alone, with plain compiler command lines through pkg-config
#    (shared, and -static through --static's Libs.private and Requires.private) and with CMake
#    (tests/sdk, once as a C project and once with C++: find_package(userperf),
#    userperf::userperf, userperf::userperf_static, userperf::calltrace_hooks), each program run;
#  - the installed CLI recording a program and reporting on it, which proves it finds the
#    installed agent (and fails once the agent is moved away), and tracing the calls of a program
#    linked with the installed hooks;
#  - the installed library's SONAME and exports, and the man pages: clean roff that names every
#    option the CLI's --help lists.
# Usage: sdk_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$1
source=$2
# shellcheck source=tests/integration/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
# The installed CLI must find its agent by itself.
unset USERPERF_AGENT
prefix=$dir/prefix

if ! cmake --install "$build" --prefix "$prefix" >"$dir/install.log" 2>&1; then
  fail "cmake --install: $(tail -5 "$dir/install.log")"
  finish
fi

# Where the package's files are: libdir is GNUInstallDirs' (lib, or lib/<multiarch> for /usr).
pc=$(find "$prefix" -name userperf.pc)
[[ -n $pc ]] || {
  fail "no userperf.pc under $prefix"
  finish
}
export PKG_CONFIG_PATH=${pc%/*}
libdir=$(realpath "$(pkg-config --variable=libdir userperf)")
includedir=$(realpath "$(pkg-config --variable=includedir userperf)")
[[ $libdir == "$prefix"/* ]] || fail "pkg-config's libdir $libdir is not under the prefix"
for file in "$prefix/bin/userperf" "$includedir/userperf/userperf.h" "$includedir/userperf/userperf.hpp" \
  "$includedir/userperf/tracepoint.h" "$includedir/userperf/calltrace.h" "$includedir/userperf/log.h" \
  "$libdir/libuserperf.so" "$libdir/libuserperf.a" "$libdir/libuserperf_calltrace_hooks.a" \
  "$libdir/userperf/libuserperf_agent.so" "$libdir/cmake/userperf/userperfConfig.cmake" \
  "$libdir/cmake/userperf/userperfConfigVersion.cmake" "$prefix/share/man/man1/userperf.1" \
  "$prefix/share/man/man1/userperf-record.1" "$prefix/share/man/man1/userperf-report.1"; do
  [[ -e $file ]] || fail "not installed: ${file#"$prefix"/}"
done
if [[ $(uname -m) == x86_64 ]]; then  # glibc's versioned condition-variable waits, beside the agent
  [[ -e $libdir/userperf/libuserperf_condvar.so ]] || fail "not installed: libuserperf_condvar.so"
fi

# The shared library: a SONAME, and the C API (userperf_*) as its only exports.
soname=$(readelf -d "$libdir/libuserperf.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[[ $soname == libuserperf.so.0 && -e $libdir/$soname ]] || fail "SONAME '$soname' (libuserperf.so.0 expected)"
exports=$(nm -D --defined-only "$libdir/libuserperf.so" | awk '{ print $3 }')
grep -q '^userperf_perf_event_open$' <<<"$exports" || fail "libuserperf.so does not export userperf_perf_event_open"
others=$(grep -v -e '^userperf_' -e '^pthread_create$' <<<"$exports" | head -5)
[[ -z $others ]] || fail "libuserperf.so exports more than the C API: $others"

# run NAME PROGRAM [ARGS...]: runs it, its output in $dir/NAME.out; self_sample prints its samples
# and exits non-zero without any.
run() {
  local name=$1
  shift
  "$@" >"$dir/$name.out" 2>&1
  local status=$?
  ((status == 0)) || fail "$name exited $status: $(tail -3 "$dir/$name.out")"
}
# needs_libuserperf PROGRAM yes|no: whether it must load libuserperf.so.0.
needs_libuserperf() {
  local loads=no
  grep -q 'NEEDED.*\[libuserperf\.so\.0\]' < <(readelf -d "$1") && loads=yes
  [[ $loads == "$2" ]] || fail "${1##*/}: NEEDED libuserperf.so.0 is '$loads', '$2' expected"
}

# pkg-config: plain command lines. Warnings are errors: the installed headers must compile cleanly.
cflags=(-O1 -Wall -Wextra -Werror)
read -ra shared_flags <<<"$(pkg-config --cflags --libs userperf)"
read -ra static_flags <<<"$(pkg-config --static --cflags --libs userperf)"
if cc "${cflags[@]}" "$source/examples/self_sample.c" "${shared_flags[@]}" \
  -Wl,-rpath,"$libdir" -o "$dir/pc_shared" 2>"$dir/pc_shared.log"; then
  needs_libuserperf "$dir/pc_shared" yes
  run pc_shared "$dir/pc_shared"
else
  fail "pkg-config shared link: $(tail -5 "$dir/pc_shared.log")"
fi
# A fully static program: libuserperf.a, and what Libs.private and Requires.private name (libbpf,
# libelf, zlib, the C++ runtime) as Debian's archives.
if cc "${cflags[@]}" -static "$source/examples/self_sample.c" "${static_flags[@]}" \
  -o "$dir/pc_static" 2>"$dir/pc_static.log"; then
  grep -q NEEDED < <(readelf -d "$dir/pc_static" 2>/dev/null) && fail "pc_static is not statically linked"
  run pc_static "$dir/pc_static"
else
  fail "pkg-config static link: $(tail -5 "$dir/pc_static.log")"
fi
# The program the installed CLI records: plain C, no userperf library.
cc -O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer "$source/examples/hotspots.c" -o "$dir/hotspots" ||
  fail "cannot build hotspots"

# CMake: find_package(userperf) with the prefix alone, as a C project and as a C and C++ one.
for languages in c cxx; do
  build_dir=$dir/cmake-$languages
  cxx=OFF
  [[ $languages == cxx ]] && cxx=ON
  if cmake -S "$source/tests/sdk" -B "$build_dir" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DUSERPERF_SOURCE_DIR="$source" -DUSERPERF_SDK_CXX=$cxx >"$build_dir.log" 2>&1 &&
    cmake --build "$build_dir" >>"$build_dir.log" 2>&1; then
    package_dir=$(sed -n 's/^userperf_DIR:PATH=//p' "$build_dir/CMakeCache.txt")
    [[ $(realpath "$package_dir") == "$libdir/cmake/userperf" ]] ||
      fail "find_package(userperf) found $package_dir, not the installed package"
    programs=(self_sample)
    [[ $languages == cxx ]] && programs+=(raii_sample)
    for program in "${programs[@]}"; do
      needs_libuserperf "$build_dir/${program}_shared" yes
      needs_libuserperf "$build_dir/${program}_static" no
      run "cmake_${languages}_${program}_shared" "$build_dir/${program}_shared"
      run "cmake_${languages}_${program}_static" "$build_dir/${program}_static"
    done
  else
    fail "the $languages CMake project against the installed package: $(grep -m5 -iE 'error' "$build_dir.log")"
  fi
done
for out in "$dir"/*.out; do
  echo "${out##*/}: $(cat "$out")"
done

# The installed CLI finds the installed agent: record, then report.
userperf=$prefix/bin/userperf
"$userperf" record -q -g -o "$dir/x.data" -- "$dir/hotspots" 0.5 >"$dir/record.log" 2>&1
status=$?
if ((status != 0)); then
  fail "installed userperf record exited $status: $(tail -3 "$dir/record.log")"
else
  "$userperf" report -i "$dir/x.data" --stdio --no-children -g none >"$dir/report.txt" 2>&1
  status=$?
  ((status == 0)) || fail "installed userperf report exited $status: $(tail -3 "$dir/report.txt")"
  for function in hot_parse warm_transform cool_checksum; do
    grep -q "\[\.\] $function\$" "$dir/report.txt" || fail "the report does not name $function"
  done
  echo "report: $(grep -m1 '^# Samples' "$dir/report.txt")"
fi
# With --off-cpu, the installed CLI also finds the condition-variable object beside the agent.
"$userperf" record -q --off-cpu -o "$dir/offcpu.data" -- "$dir/hotspots" 0.1 >"$dir/offcpu.log" 2>&1 ||
  fail "installed userperf record --off-cpu exited $?: $(tail -3 "$dir/offcpu.log")"
if grep -q "libuserperf_condvar" "$dir/offcpu.log"; then
  fail "installed userperf record --off-cpu: $(grep -m1 libuserperf_condvar "$dir/offcpu.log")"
fi
# ... and nothing else: with the installed agent moved away, record refuses to run.
agent=$libdir/userperf/libuserperf_agent.so
if [[ -e $agent ]]; then
  mv "$agent" "$agent.moved"
  "$userperf" record -q -o "$dir/y.data" -- "$dir/hotspots" 0.1 >"$dir/noagent.log" 2>&1
  status=$?
  mv "$agent.moved" "$agent"
  if ((status != 255)) || ! grep -q "agent library" "$dir/noagent.log"; then
    fail "record without the installed agent exited $status: $(cat "$dir/noagent.log")"
  fi
fi

# A program linked with the installed hooks, traced through the installed agent.
traced=$dir/cmake-c/traced
if [[ -x $traced ]]; then
  if "$userperf" record -q --aux calltrace --aux-sample 2048 -o "$dir/t.data" -- "$traced" 0.5 \
    >"$dir/traced.log" 2>&1 && "$userperf" script -i "$dir/t.data" >"$dir/script.txt" 2>&1; then
    samples=$(grep -c 'PERF_RECORD_SAMPLE' "$dir/script.txt")
    leaves=$(grep -c -- '-> traced_leaf+0x0 .* from traced_middle+' "$dir/script.txt")
    echo "calltrace: $samples samples, $leaves traced_leaf entries"
    ((samples >= 50)) || fail "only $samples samples of the traced program"
    ((leaves >= samples)) || fail "traced_leaf called from traced_middle only $leaves times in $samples windows"
  else
    fail "recording the traced program: $(tail -n 3 "$dir/traced.log") $(tail -n 3 "$dir/script.txt")"
  fi
else
  fail "no traced program was built"
fi

# The man pages: roff groff reads without a warning, naming every option of the CLI's --help.
for page in userperf userperf-record userperf-report; do
  file=$prefix/share/man/man1/$page.1
  [[ -e $file ]] || continue
  warnings=$(groff -man -Tutf8 -ww -z "$file" 2>&1)
  [[ -z $warnings ]] || fail "$page.1: $warnings"
  subcommand=${page#userperf}
  subcommand=${subcommand#-}
  [[ -n $subcommand ]] || continue
  options=$("$userperf" "$subcommand" --help | grep -oE '(^|[ ,])(-[a-zA-Z]|--[a-z][a-z-]*)' |
    tr -d ' ,' | sort -u | grep -vxE -- '-h|--help')
  [[ -n $options ]] || fail "userperf $subcommand --help lists no options"
  for option in $options; do
    grep -qF -- "${option//-/\\-}" "$file" || fail "$page.1 does not describe $option"
  done
done

finish "sdk: all checks passed"
