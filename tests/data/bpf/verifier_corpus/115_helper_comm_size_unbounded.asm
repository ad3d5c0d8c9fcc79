# license: GPL
# expect: reject EACCES
# why: mem+size helper with an unbounded size
ldxdw %r2, [%r1+168]
mov %r1, %r10
add %r1, -16
call bpf_get_current_comm
exit
