# license: GPL
# expect: accept
# why: 504 bytes in main and 16 in the callee
stdw [%r10-504], 0
call local f
exit
f:
stdw [%r10-16], 0
mov %r0, 0
exit
