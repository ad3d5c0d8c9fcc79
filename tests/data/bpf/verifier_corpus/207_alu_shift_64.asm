# license: GPL
# expect: reject EINVAL
# why: shift by the immediate 64 is out of range
mov %r0, 1
lsh %r0, 64
exit
