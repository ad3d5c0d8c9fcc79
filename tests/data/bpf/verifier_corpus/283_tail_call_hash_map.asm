# license: GPL
# map: counts hash key=4 value=4 entries=4
# expect: reject EINVAL
# why: bpf_tail_call takes a PROG_ARRAY only
lddw %r2, map:counts
mov %r3, 0
call bpf_tail_call
mov %r0, 0
exit
