# license: GPL
# map: stacks stack_trace key=4 value=160 entries=16
# expect: accept
# why: get_stackid (perf_event variant) with a stack trace map
lddw %r2, map:stacks
mov %r3, 0
call bpf_get_stackid
exit
