# license: GPL
# expect: reject EACCES
# why: narrow (4-byte) loads inside pt_regs are not allowed
ldxw %r0, [%r1+8]
exit
