# license: GPL
# map: progs prog_array key=4 value=4 entries=4
# expect: reject EINVAL
# why: a tail call in a subprogram needs BTF function info, which an assembled program has not (the C programs 325-329 have it)
call local f
mov %r0, 0
exit
f:
lddw %r2, map:progs
mov %r3, 0
call bpf_tail_call
mov %r0, 0
exit
