# license: GPL
# expect: reject EINVAL
# why: signed division by the immediate 0
mov %r0, 1
sdiv %r0, 0
exit
