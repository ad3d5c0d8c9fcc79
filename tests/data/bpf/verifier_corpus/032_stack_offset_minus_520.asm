# license: GPL
# expect: reject EACCES
# why: an 8-byte store at r10-520 is below the 512-byte stack
stdw [%r10-520], 0
mov %r0, 0
exit
