# license: GPL
# map: progs prog_array key=4 value=4 entries=4
# expect: accept
# why: a tail call in the main program of a program with subprograms needs no BTF
mov %r6, %r1
call local f
mov %r1, %r6
lddw %r2, map:progs
mov %r3, 0
call bpf_tail_call
mov %r0, 0
exit
f:
mov %r0, 0
exit
