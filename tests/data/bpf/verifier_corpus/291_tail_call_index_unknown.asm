# license: GPL
# map: progs prog_array key=4 value=4 entries=4
# expect: accept
# why: the index may be any scalar (checked at run time)
ldxdw %r3, [%r1+176]
lddw %r2, map:progs
call bpf_tail_call
mov %r0, 0
exit
