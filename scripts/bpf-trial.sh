#!/usr/bin/env bash
# The real-world trial (docs/bpf.md): real SEC("perf_event") programs of other projects, compiled
# as their users would (clang -O2 -g -target bpf against a vmlinux.h dumped from the running
# kernel, libbpf-dev's headers), each given to the kernel (libbpf, as root) and to
# `userperf bpf verify`. Prints one line per perf_event program: project, program, the kernel's
# verdict, userperf's, and for a refusal its reason (the last line of the log: the helper,
# instruction or feature refused); then "kernel accepts K of N; userperf accepts U of K".
# Usage: scripts/bpf-trial.sh PATH_TO_USERPERF [SOURCES_DIR]
#   SOURCES_DIR (default $BPF_TRIAL_SOURCES, else /work/.mirror) holds git clones of the projects
#   named in scripts/bpf-trial/manifest.txt, one per OWNER+NAME directory (a clone, or a
#   directory whose `repo` is the git dir). Each source and every header it includes from its
#   project is read at the manifest's commit with `git show` into a temporary directory: other
#   projects' code is never part of this repository (scripts/bpf-trial/README.md: provenance).
#   A clone or commit that is missing makes its programs "source missing" in the table and the
#   summary.
# Exit 77 (skip) when not run as root; 1 on a script error (a tool missing, a program that does
# not compile, an object neither side can open); else 0, whatever the verdicts.
set -uo pipefail
userperf=${1:?usage: $0 PATH_TO_USERPERF [SOURCES_DIR]}
sources=${2:-${BPF_TRIAL_SOURCES:-/work/.mirror}}
here=$(cd "$(dirname "$0")" && pwd)
manifest=$here/bpf-trial/manifest.txt
if [[ $(id -u) -ne 0 ]]; then
  echo "bpf-trial: the kernel's verdicts need root: skipped"
  exit 77
fi
for tool in clang bpftool cc git; do
  command -v "$tool" >/dev/null || { echo "bpf-trial: $tool is missing" >&2; exit 1; }
done
[[ -x $userperf ]] || { echo "bpf-trial: $userperf is not executable" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/generated"
bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$work/generated/vmlinux.h" ||
  { echo "bpf-trial: cannot dump the kernel's BTF" >&2; exit 1; }
cc -O2 -Wall -Wextra -Werror -o "$work/load" "$here/bpf-trial-load.c" -lbpf ||
  { echo "bpf-trial: cannot build the kernel loader (libbpf-dev?)" >&2; exit 1; }

# The git dir of OWNER/NAME's clone under $sources, or nothing.
clone_of() {
  local base=$sources/${1/\//+} candidate
  for candidate in "$base/.git" "$base/repo" "$base"; do
    if [[ -e $candidate ]] && git --git-dir="$candidate" rev-parse --git-dir >/dev/null 2>&1; then
      echo "$candidate"
      return
    fi
  done
}

# A repository path with "." and ".." resolved lexically ("bpf/cpu/../vmlinux.h" → "bpf/vmlinux.h").
normalized() {
  local part out=()
  IFS=/ read -ra parts <<<"$1"
  for part in "${parts[@]}"; do
    case $part in
      "" | .) ;;
      ..) ((${#out[@]})) && unset 'out[-1]' ;;
      *) out+=("$part") ;;
    esac
  done
  (IFS=/; echo "${out[*]}")
}

# Writes PATH (and, recursively, every header it includes that the repository holds at COMMIT,
# looked up as the compiler will: a quoted name beside its includer first, then the include
# directories in order) under the tree DEST. A header named vmlinux.h is the running kernel's,
# wherever the project keeps its own. Headers the repository does not hold (libbpf's <bpf/...>,
# the C library's, a submodule's) are left to the compiler's other directories.
declare -A extracted=()
extract() {
  local gitdir=$1 commit=$2 dest=$3 path=$4 kind name candidate entry mode target
  shift 4
  local dirs=("$@")
  [[ -n ${extracted["$dest/$path"]:-} ]] && return 0
  extracted["$dest/$path"]=1
  entry=$(git --git-dir="$gitdir" ls-tree "$commit" -- "$path") || return 1
  [[ -n $entry ]] || return 1
  mkdir -p "$dest/$(dirname "$path")"
  if [[ $(basename "$path") == vmlinux.h ]]; then
    cp "$work/generated/vmlinux.h" "$dest/$path"
    return 0
  fi
  mode=${entry%% *}
  if [[ $mode == 120000 ]]; then  # a symbolic link: its target's text under the link's name
    target=$(normalized "$(dirname "$path")/$(git --git-dir="$gitdir" show "$commit:$path")")
    git --git-dir="$gitdir" show "$commit:$target" >"$dest/$path" || return 1
  else
    git --git-dir="$gitdir" show "$commit:$path" >"$dest/$path" || return 1
  fi
  while read -r kind name; do
    local search=()
    [[ $kind == '"' ]] && search+=("$(dirname "$path")")
    search+=("${dirs[@]}")
    for candidate in "${search[@]}"; do
      candidate=$(normalized "$candidate/$name")
      if [[ -n $(git --git-dir="$gitdir" ls-tree "$commit" -- "$candidate") ]]; then
        extract "$gitdir" "$commit" "$dest" "$candidate" "${dirs[@]}" || return 1
        break
      fi
    done
  done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*([<"])([^>"]+)[>"].*/\1 \2/p' \
             "$dest/$path")
  return 0
}

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
missing_sources=0
missing_programs=0
declare -A causes=()
row() { printf '%-16s %-30s %-9s %-10s %s\n' "$@"; }
row project program kernel userperf "reason (a refusal's)"
while read -r project repo commit source includes defines programs settings; do
  [[ -z ${project:-} || $project == \#* ]] && continue
  gitdir=$(clone_of "$repo")
  why=""
  if [[ -z $gitdir ]]; then
    why="no clone of $repo in $sources"
  elif ! git --git-dir="$gitdir" cat-file -e "$commit^{commit}" 2>/dev/null; then
    why="$repo has no commit $commit"
  fi
  dirs=()
  [[ $includes != - ]] && IFS=, read -ra dirs <<<"$includes"
  tree="$work/src/${repo/\//+}@$commit"
  if [[ -z $why ]] && ! extract "$gitdir" "$commit" "$tree" "$source" "${dirs[@]}"; then
    why="$repo has no $source at $commit"
  fi
  if [[ -n $why ]]; then
    row "$project" "$(basename "$source")" - - "source missing ($programs perf_event programs): $why"
    missing_sources=$((missing_sources + 1))
    missing_programs=$((missing_programs + programs))
    continue
  fi
  object="$work/$project-$(echo "$source" | tr / _).o"
  flags=(-O2 -g -target bpf -D__TARGET_ARCH_x86 -I"$work/generated")
  for d in "${dirs[@]}"; do flags+=(-I"$tree/$d"); done
  if [[ $defines != - ]]; then
    IFS=, read -ra names <<<"$defines"
    for d in "${names[@]}"; do flags+=(-D"$d"); done
  fi
  if ! clang "${flags[@]}" -c "$tree/$source" -o "$object" 2>"$work/clang.log"; then
    echo "bpf-trial: $project $source does not compile: $(grep -m1 error "$work/clang.log")" >&2
    status=1
    continue
  fi
  map_args=()
  [[ $settings != - ]] && IFS=, read -ra map_args <<<"$settings"
  if ! "$work/load" "$object" "${map_args[@]}" >"$work/kernel.tsv" 2>"$work/load.log"; then
    echo "bpf-trial: the kernel loader cannot open $project $source: $(cat "$work/load.log")" >&2
    status=1
    continue
  fi
  if [[ $(wc -l <"$work/kernel.tsv") -ne $programs ]]; then
    echo "bpf-trial: $project $source holds $(wc -l <"$work/kernel.tsv") perf_event programs," \
      "the manifest says $programs" >&2
    status=1
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
    row "$project" "$program" "$kernel" "$verdict" "$detail"
  done <"$work/kernel.tsv"
done <"$manifest"

echo
echo "userperf's refusals of programs the kernel accepts, by reason:"
for reason in "${!causes[@]}"; do printf '  %2d  %s\n' "${causes[$reason]}" "$reason"; done |
  sort -rn
echo "kernel accepts $kernel_ok of $total; userperf accepts $both_ok of $kernel_ok"
if ((missing_sources > 0)); then
  echo "source missing: $missing_sources sources ($missing_programs programs) not run; see the" \
    "table and scripts/bpf-trial/README.md for the clones"
fi
exit $status
