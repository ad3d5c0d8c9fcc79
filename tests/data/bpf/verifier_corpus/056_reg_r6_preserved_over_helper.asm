# license: GPL
# expect: accept
# why: a helper call preserves r6-r9
mov %r6, 7
call bpf_ktime_get_ns
mov %r0, %r6
exit
