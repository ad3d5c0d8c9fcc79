# license: GPL
# expect: reject EACCES
# why: a bpf-to-bpf call scratches the caller's r1-r5
mov %r1, 1
call local f
mov %r0, %r1
exit
f:
mov %r0, 0
exit
