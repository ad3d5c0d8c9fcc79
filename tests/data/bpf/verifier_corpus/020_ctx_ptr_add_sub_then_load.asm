# license: GPL
# expect: accept
# why: ctx pointer moved and moved back to offset 0, then loaded
add %r1, 8
sub %r1, 8
ldxdw %r0, [%r1+168]
exit
