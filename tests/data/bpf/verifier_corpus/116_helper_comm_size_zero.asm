# license: GPL
# expect: reject EACCES
# why: size 0 where ARG_CONST_SIZE does not allow it
mov %r1, %r10
add %r1, -16
mov %r2, 0
call bpf_get_current_comm
exit
