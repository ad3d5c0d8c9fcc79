# license: GPL
# map: progs prog_array key=4 value=4 entries=4
# expect: accept
# why: tail_call with a prog array
lddw %r2, map:progs
mov %r3, 0
call bpf_tail_call
mov %r0, 0
exit
