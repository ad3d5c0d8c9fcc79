# license: GPL
# expect: reject EACCES
# why: stack accesses must be aligned: 8-byte spill at r10-4
stxdw [%r10-4], %r1
mov %r0, 0
exit
