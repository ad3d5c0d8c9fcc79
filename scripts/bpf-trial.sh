#!/usr/bin/env bash
# The real-world trial (docs/bpf.md): real SEC("perf_event") programs of other projects, compiled
# as their users would (clang -O2 -g -target bpf against a vmlinux.h dumped from the running
# kernel, libbpf-dev's headers), each given to the kernel (libbpf, as root) and to
# `userperf bpf verify`. Prints one line per perf_event program: project, program, the kernel's
# verdict, userperf's, and for a refusal its reason (the last line of the log: the helper,
# instruction or feature refused); then "kernel accepts K of N; userperf accepts U of K".
# Usage: scripts/bpf-trial.sh PATH_TO_USERPERF [TRIAL_DIR]
#   TRIAL_DIR (default $BPF_TRIAL_DIR, else /work/shared/bpf-trial) holds the programs'
#   unmodified sources and headers and manifest.txt (its format is described at its top). The
#   sources are other projects' code: they are never part of this repository.
# Exit 77 (skip) when TRIAL_DIR is missing or not run as root; 1 on a script error (a tool
# missing, a program that does not compile, an object neither side can open); else 0, whatever
# the verdicts.
set -uo pipefail
userperf=${1:?usage: $0 PATH_TO_USERPERF [TRIAL_DIR]}
trial=${2:-${BPF_TRIAL_DIR:-/work/shared/bpf-trial}}
here=$(cd "$(dirname "$0")" && pwd)
if [[ ! -f $trial/manifest.txt ]]; then
  echo "bpf-trial: no trial programs at $trial (manifest.txt missing): skipped"
  exit 77
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "bpf-trial: the kernel's verdicts need root: skipped"
  exit 77
fi
for tool in clang bpftool cc; do
  command -v "$tool" >/dev/null || { echo "bpf-trial: $tool is missing" >&2; exit 1; }
done
[[ -x $userperf ]] || { echo "bpf-trial: $userperf is not executable" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$work/vmlinux.h" ||
  { echo "bpf-trial: cannot dump the kernel's BTF" >&2; exit 1; }
cc -O2 -Wall -Wextra -Werror -o "$work/load" "$here/bpf-trial-load.c" -lbpf ||
  { echo "bpf-trial: cannot build the kernel loader (libbpf-dev?)" >&2; exit 1; }

# userperf's verdict per program, from `userperf bpf verify OBJ`: NAME<TAB>VERDICT<TAB>REASON.
# A rejected program's reason is the last log line before its "processed" line; an object that
# does not load gives every program the loader's message; a program skipped as "not a
# perf_event program" (a section libbpf does not know) is reported as such. Arguments after the
# object go to `userperf bpf verify` (a map-in-map's --inner-map).
userperf_verdicts() {
  "$userperf" bpf verify "$@" 2>&1 | awk -v object="$1" '
    /^program .*: accepted$/ { name = $2; print name "\taccepted\t"; name = ""; next }
    /^program .*: rejected/ { name = $2; reason = ""; next }
    /^program .*: skipped$/ { sub(/^program /, ""); n = $1; sub(/^[^:]*: /, "");
                              print n "\tskipped\t" $0; next }
    /^processed / { if (name != "") print name "\trejected\t" reason; name = ""; next }
    /^userperf bpf verify: cannot load / { sub(/^userperf bpf verify: cannot load /, "");
                                           sub(/^[^:]*: [^:]*: /, ""); print "*\tnot loaded\t" $0;
                                           next }
    name != "" && NF > 0 { reason = $0 }'
}

status=0
total=0
kernel_ok=0
both_ok=0
declare -A causes=()
printf '%-16s %-30s %-9s %-10s %s\n' project program kernel userperf "reason (a refusal's)"
while read -r project source includes defines settings; do
  [[ -z ${project:-} || $project == \#* ]] && continue
  object="$work/$(echo "$source" | tr / _).o"
  flags=(-O2 -g -target bpf -D__TARGET_ARCH_x86 -I"$work" -I"$(dirname "$trial/$source")")
  if [[ $includes != - ]]; then
    IFS=, read -ra dirs <<<"$includes"
    for d in "${dirs[@]}"; do
      [[ $d == /* ]] && flags+=(-I"$d") || flags+=(-I"$trial/$d")
    done
  fi
  if [[ $defines != - ]]; then
    IFS=, read -ra names <<<"$defines"
    for d in "${names[@]}"; do flags+=(-D"$d"); done
  fi
  if ! clang "${flags[@]}" -c "$trial/$source" -o "$object" 2>"$work/clang.log"; then
    echo "bpf-trial: $source does not compile: $(grep -m1 error "$work/clang.log")" >&2
    status=1
    continue
  fi
  map_args=()
  [[ $settings != - ]] && IFS=, read -ra map_args <<<"$settings"
  if ! "$work/load" "$object" "${map_args[@]}" >"$work/kernel.tsv" 2>"$work/load.log"; then
    echo "bpf-trial: the kernel loader cannot open $source: $(cat "$work/load.log")" >&2
    status=1
    continue
  fi
  # A map-in-map's inner map (MAP.inner_array=K:V:E:F) is userperf's --inner-map MAP=array:K:V:E:F.
  verify_args=()
  for arg in "${map_args[@]}"; do
    [[ $arg == *.inner_array=* ]] &&
      verify_args+=(--inner-map "${arg%%.inner_array=*}=array:${arg#*.inner_array=}")
  done
  userperf_verdicts "$object" "${verify_args[@]}" >"$work/userperf.tsv"
  while IFS=$'\t' read -r program kernel kernel_errno kernel_reason; do
    total=$((total + 1))
    line=$(awk -F'\t' -v p="$program" '$1 == p || $1 == "*" { print; exit }' "$work/userperf.tsv")
    verdict=$(cut -f2 <<<"$line")
    reason=$(cut -f3- <<<"$line")
    [[ -z $verdict ]] && verdict="absent" reason="not in userperf's output"
    detail=""
    if [[ $kernel == accepted ]]; then
      kernel_ok=$((kernel_ok + 1))
      if [[ $verdict == accepted ]]; then
        both_ok=$((both_ok + 1))
      else
        detail="userperf: $reason"
        # The cause without the program and instruction that name where it was met.
        cause=$(sed -E "s/^program '[^']*' \(section '[^']*'\) instruction [0-9]+: //" <<<"$reason")
        causes["$cause"]=$((${causes["$cause"]:-0} + 1))
      fi
    else
      detail="kernel ($kernel_errno): $kernel_reason"
      [[ $verdict != accepted ]] && detail+="; userperf: $reason"
    fi
    printf '%-16s %-30s %-9s %-10s %s\n' "$project" "$program" "$kernel" "$verdict" "$detail"
  done <"$work/kernel.tsv"
done <"$trial/manifest.txt"

echo
echo "userperf's refusals of programs the kernel accepts, by reason:"
for reason in "${!causes[@]}"; do printf '  %2d  %s\n' "${causes[$reason]}" "$reason"; done |
  sort -rn
echo "kernel accepts $kernel_ok of $total; userperf accepts $both_ok of $kernel_ok"
exit $status
