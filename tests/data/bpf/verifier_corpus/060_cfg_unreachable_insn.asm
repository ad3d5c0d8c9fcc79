# license: GPL
# expect: reject EINVAL
# why: instructions after exit that nothing jumps to
mov %r0, 0
exit
mov %r0, 1
exit
