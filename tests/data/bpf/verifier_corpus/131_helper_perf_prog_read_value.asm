# license: GPL
# expect: accept
# why: perf_prog_read_value into a struct bpf_perf_event_value on the stack
mov %r2, %r10
add %r2, -24
mov %r3, 24
call bpf_perf_prog_read_value
exit
