# license: GPL
# map: progs prog_array key=4 value=4 entries=4
# expect: accept
# why: callee-saved registers survive a failed tail call; the ctx kept in r6 is usable after it
mov %r6, %r1
lddw %r2, map:progs
mov %r3, 1
call bpf_tail_call
ldxdw %r0, [%r6+168]
exit
