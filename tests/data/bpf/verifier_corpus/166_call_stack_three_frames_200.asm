# license: GPL
# expect: accept
# why: three frames of 200 bytes each (600 combined)
stdw [%r10-200], 0
call local f
exit
f:
stdw [%r10-200], 0
call local g
exit
g:
stdw [%r10-200], 0
mov %r0, 0
exit
