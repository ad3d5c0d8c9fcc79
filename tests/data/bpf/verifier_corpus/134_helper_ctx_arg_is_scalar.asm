# license: GPL
# map: stacks stack_trace key=4 value=160 entries=16
# expect: reject EACCES
# why: get_stackid with a scalar where ctx must be
mov %r1, 0
lddw %r2, map:stacks
mov %r3, 0
call bpf_get_stackid
exit
