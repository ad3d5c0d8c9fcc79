# license: GPL
# expect: accept
# why: comparing two pointers (privileged)
mov %r0, 0
jeq %r1, %r10, out
mov %r0, 1
out:
exit
