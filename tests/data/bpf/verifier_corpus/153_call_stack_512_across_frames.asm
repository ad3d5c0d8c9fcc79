# license: GPL
# expect: accept
# why: 256 bytes in main and 256 in the callee: 512 combined
stdw [%r10-256], 0
call local f
exit
f:
stdw [%r10-256], 0
mov %r0, 0
exit
