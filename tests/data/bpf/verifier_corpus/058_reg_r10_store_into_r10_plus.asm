# license: GPL
# expect: reject EACCES
# why: r10 as a destination of an ALU op (add r10, 8)
add %r10, 8
mov %r0, 0
exit
