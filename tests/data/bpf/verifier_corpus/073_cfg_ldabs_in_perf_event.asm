# license: GPL
# expect: reject EINVAL
# why: legacy packet load (ldabs) is only for socket filters
mov %r6, %r1
ldabsw 0
exit
