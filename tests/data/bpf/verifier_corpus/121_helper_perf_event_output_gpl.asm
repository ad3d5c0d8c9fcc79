# license: GPL
# map: events perf_event_array key=4 value=4 entries=8
# expect: accept
# why: bpf_perf_event_output from a GPL program
stdw [%r10-8], 42
mov %r4, %r10
add %r4, -8
mov %r5, 8
lddw %r2, map:events
lddw %r3, 0xffffffff
call bpf_perf_event_output
mov %r0, 0
exit
