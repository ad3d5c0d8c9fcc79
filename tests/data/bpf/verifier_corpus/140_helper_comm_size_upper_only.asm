# license: GPL
# expect: reject EACCES
# why: size bounded to 0..16: zero is possible for ARG_CONST_SIZE
ldxdw %r2, [%r1+168]
mov %r0, 0
jgt %r2, 16, out
mov %r1, %r10
add %r1, -16
call bpf_get_current_comm
out:
exit
