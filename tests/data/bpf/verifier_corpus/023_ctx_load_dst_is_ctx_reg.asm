# license: GPL
# expect: accept
# why: load into the register holding ctx (r1 = *(r1+168))
ldxdw %r1, [%r1+168]
mov %r0, %r1
exit
