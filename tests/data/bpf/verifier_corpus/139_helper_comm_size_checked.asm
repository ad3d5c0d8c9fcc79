# license: GPL
# expect: accept
# why: size from ctx bounded to 1..16 by two checks
ldxdw %r2, [%r1+168]
mov %r0, 0
jeq %r2, 0, out
jgt %r2, 16, out
mov %r1, %r10
add %r1, -16
call bpf_get_current_comm
out:
exit
