# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: reject EINVAL
# why: perf_event_output needs a PERF_EVENT_ARRAY, not a hash
stdw [%r10-8], 42
mov %r4, %r10
add %r4, -8
mov %r5, 8
lddw %r2, map:counts
lddw %r3, 0xffffffff
call bpf_perf_event_output
mov %r0, 0
exit
