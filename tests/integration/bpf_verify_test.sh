#!/usr/bin/env bash
# `userperf bpf verify`'s verdicts and exit status: 0 when every perf_event program of the object
# is accepted, programs of other types (kprobe, tracepoint, xdp) named as skipped; 1 when a
# perf_event program is rejected; 2 when there is no perf_event program to verify or the object
# cannot be loaded.
# Usage: bpf_verify_test.sh PATH_TO_USERPERF BPF_OBJECT_DIR (build/bpf/progs)
set -uo pipefail
userperf=$1
objects=$2
# shellcheck source=tests/integration/test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

# verify NAME EXPECTED_EXIT OBJECT: runs the command, checks its exit status.
verify() {
  local name=$1 expected=$2 object=$3
  "$userperf" bpf verify "$objects/$object" >"$dir/stdout" 2>"$dir/stderr"
  local rc=$?
  [[ $rc -eq $expected ]] ||
    fail "$name: exit $rc, expected $expected: $(tail -3 "$dir/stdout") $(cat "$dir/stderr")"
}
# expect_line NAME FILE PATTERN: PATTERN (an extended regex) is in FILE.
expect_line() {
  grep -Eq -- "$3" "$dir/$2" || fail "$1: $2 lacks '$3': $(tail -5 "$dir/$2")"
}

verify "mixed types" 0 mixed_types.bpf.o
expect_line "mixed types" stdout "program on_sample \(section perf_event, [0-9]+ insns\): accepted"
expect_line "mixed types" stdout "program on_nanosleep \(section kprobe/do_nanosleep\): not a perf_event program \(type 2\): skipped"
expect_line "mixed types" stdout "program on_sched_switch \(section tracepoint/sched/sched_switch\): not a perf_event program \(type 5\): skipped"
expect_line "mixed types" stdout "^1 perf_event program\(s\) verified: 1 accepted, 0 rejected; skipped \(not perf_event\): on_nanosleep \(kprobe/do_nanosleep\), on_sched_switch \(tracepoint/sched/sched_switch\)$"

verify "accepted" 0 handler_filter.bpf.o
expect_line "accepted" stdout "verified: 1 accepted, 0 rejected$"

verify "rejected" 1 handler_rejected.bpf.o
expect_line "rejected" stdout "R0 invalid mem access 'map_value_or_null'"
expect_line "rejected" stdout "verified: 0 accepted, 1 rejected$"

verify "only other types" 2 sections.bpf.o
expect_line "only other types" stdout "skipped \(not perf_event\): xdp_pass \(xdp\), on_sched_switch"
expect_line "only other types" stderr "has no perf_event program"

# ebpf_exporter's sections, "perf_event/" and the event's attributes, are perf_event programs.
verify "perf_event/ sections" 0 perf_event_sections.bpf.o
expect_line "perf_event/ sections" stdout "program on_cache_miss \(section perf_event/type=0,config=3,frequency=1, [0-9]+ insns\): accepted"
expect_line "perf_event/ sections" stdout "skipped \(not perf_event\): not_perf_event \(perf_events\)$"

# CO-RE relocations are applied against the running kernel's BTF, then the programs verified
# (a kind userperf does not apply refuses the object: unit_bpf_loader CoreRelocations.*).
if [[ -r /sys/kernel/btf/vmlinux ]]; then
  verify "CO-RE applied" 0 core_kernel.bpf.o
  expect_line "CO-RE applied" stdout "^9 perf_event program\(s\) verified: 9 accepted, 0 rejected$"
  # An unguarded read of a field the kernel lacks: poisoned as libbpf does, rejected when reached.
  verify "CO-RE read" 0 core_read.bpf.o
  verify "CO-RE poisoned" 1 core_missing.bpf.o
  expect_line "CO-RE poisoned" stdout "invalid func unknown#195896080"
else
  echo "skipped: CO-RE applied (no /sys/kernel/btf/vmlinux)"
fi

finish "ok: bpf verify exit statuses"
