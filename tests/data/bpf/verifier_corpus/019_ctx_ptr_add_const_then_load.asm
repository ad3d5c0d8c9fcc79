# license: GPL
# expect: reject EACCES
# why: ctx pointer moved by a constant, then dereferenced (modified ctx)
add %r1, 168
ldxdw %r0, [%r1+0]
exit
