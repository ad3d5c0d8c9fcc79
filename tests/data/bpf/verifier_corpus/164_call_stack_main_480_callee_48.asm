# license: GPL
# expect: accept
# why: 480 bytes in main and 48 in the callee (below the private-stack threshold)
stdw [%r10-480], 0
call local f
exit
f:
stdw [%r10-48], 0
mov %r0, 0
exit
