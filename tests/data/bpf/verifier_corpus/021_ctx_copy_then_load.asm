# license: GPL
# expect: accept
# why: a copy of the ctx pointer keeps its type
mov %r6, %r1
mov %r1, 0
ldxdw %r0, [%r6+176]
exit
