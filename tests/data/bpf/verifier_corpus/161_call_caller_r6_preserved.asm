# license: GPL
# expect: accept
# why: a bpf-to-bpf call preserves r6-r9 even when the callee writes them
mov %r6, 2
call local f
mov %r0, %r6
exit
f:
mov %r6, 9
mov %r0, 0
exit
