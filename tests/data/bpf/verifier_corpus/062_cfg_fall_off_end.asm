# license: GPL
# expect: reject EINVAL
# why: the last instruction is not exit or a jump
mov %r0, 0
