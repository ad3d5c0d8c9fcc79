# license: GPL
# expect: accept
# why: comparing a pointer with an immediate (privileged)
mov %r0, 0
jeq %r1, 0, out
mov %r0, 1
out:
exit
