# license: GPL
# expect: reject EACCES
# why: a store at r10+0 is above the stack
stdw [%r10+0], 0
mov %r0, 0
exit
