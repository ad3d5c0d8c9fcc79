# license: GPL
# expect: reject EINVAL
# why: 32 bytes at r10-16 runs past the top of the stack
mov %r1, %r10
add %r1, -16
mov %r2, 32
call bpf_get_current_comm
exit
