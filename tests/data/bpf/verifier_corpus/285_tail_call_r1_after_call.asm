# license: GPL
# map: progs prog_array key=4 value=4 entries=4
# expect: reject EACCES
# why: r1..r5 are clobbered by the call even when it fails
lddw %r2, map:progs
mov %r3, 0
call bpf_tail_call
mov %r0, %r1
exit
