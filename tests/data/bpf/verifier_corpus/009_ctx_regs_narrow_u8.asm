# license: GPL
# expect: reject EACCES
# why: 1-byte load inside pt_regs is not allowed
ldxb %r0, [%r1+0]
exit
