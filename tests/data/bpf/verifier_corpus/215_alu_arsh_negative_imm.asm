# license: GPL
# expect: reject EINVAL
# why: arsh by an immediate of -1 (out of range)
mov %r0, 1
arsh %r0, -1
exit
