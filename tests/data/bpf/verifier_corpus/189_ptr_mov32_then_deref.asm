# license: GPL
# expect: reject EACCES
# why: mov32 of a pointer yields a scalar that cannot be dereferenced
mov32 %r2, %r10
ldxdw %r0, [%r2-8]
exit
