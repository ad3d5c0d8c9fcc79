# license: GPL
# map: progs prog_array key=4 value=4 entries=4
# expect: reject EACCES
# why: the first argument must be the ctx pointer, not a scalar
mov %r1, 0
lddw %r2, map:progs
mov %r3, 0
call bpf_tail_call
mov %r0, 0
exit
