# license: GPL
# expect: reject EACCES
# why: 8-byte atomic add at r10-12 (misaligned)
stdw [%r10-16], 0
stdw [%r10-8], 0
mov %r1, 1
lock add [%r10-12], %r1
mov %r0, 0
exit
