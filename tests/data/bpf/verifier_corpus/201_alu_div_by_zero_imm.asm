# license: GPL
# expect: reject EINVAL
# why: division by the immediate 0
mov %r0, 1
div %r0, 0
exit
