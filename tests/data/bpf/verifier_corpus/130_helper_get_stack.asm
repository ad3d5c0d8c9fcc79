# license: GPL
# expect: accept
# why: get_stack (perf_event variant) into a 64-byte stack buffer
mov %r2, %r10
add %r2, -64
mov %r3, 64
mov %r4, 0
call bpf_get_stack
exit
