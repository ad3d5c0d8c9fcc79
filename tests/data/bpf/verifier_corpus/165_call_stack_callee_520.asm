# license: GPL
# expect: reject EACCES
# why: one frame may not use more than 512 bytes, in a callee either
call local f
exit
f:
stdw [%r10-520], 0
mov %r0, 0
exit
