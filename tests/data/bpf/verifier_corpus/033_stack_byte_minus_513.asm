# license: GPL
# expect: reject EACCES
# why: a 1-byte store at r10-513 is below the stack
stb [%r10-513], 0
mov %r0, 0
exit
