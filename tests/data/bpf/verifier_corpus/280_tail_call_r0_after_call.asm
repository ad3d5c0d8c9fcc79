# license: GPL
# map: progs prog_array key=4 value=4 entries=4
# expect: reject EACCES
# why: bpf_tail_call returns nothing: r0 is unreadable after a failed call
lddw %r2, map:progs
mov %r3, 0
call bpf_tail_call
exit
