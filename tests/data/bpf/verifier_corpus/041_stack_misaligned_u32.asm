# license: GPL
# expect: reject EACCES
# why: stack accesses must be aligned: 4-byte store at r10-6
stw [%r10-6], 0
mov %r0, 0
exit
