# license: GPL
# expect: reject EINVAL
# why: 32-bit shift by the immediate 32 is out of range
mov %r0, 1
lsh32 %r0, 32
exit
