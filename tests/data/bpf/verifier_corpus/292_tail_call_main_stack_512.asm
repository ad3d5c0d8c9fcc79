# license: GPL
# map: progs prog_array key=4 value=4 entries=4
# expect: accept
# why: without subprograms the main program's stack is not limited by tail calls
stdw [%r10-512], 0
lddw %r2, map:progs
mov %r3, 0
call bpf_tail_call
mov %r0, 0
exit
