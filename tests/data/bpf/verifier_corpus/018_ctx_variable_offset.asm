# license: GPL
# expect: reject EACCES
# why: ctx pointer plus a variable offset, then load
ldxdw %r2, [%r1+168]
and %r2, 8
add %r1, %r2
ldxdw %r0, [%r1+0]
exit
