# license: GPL
# expect: reject EINVAL
# why: modulo by the immediate 0
mov %r0, 1
mod32 %r0, 0
exit
