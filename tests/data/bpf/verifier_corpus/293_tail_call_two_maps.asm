# license: GPL
# map: a prog_array key=4 value=4 entries=4
# map: b prog_array key=4 value=4 entries=8
# expect: accept
# why: one tail call instruction may see two prog arrays on different paths
lddw %r2, map:a
ldxdw %r0, [%r1+176]
jeq %r0, 0, +2
lddw %r2, map:b
mov %r3, 0
call bpf_tail_call
mov %r0, 0
exit
