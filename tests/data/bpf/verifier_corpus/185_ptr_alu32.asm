# license: GPL
# expect: reject EACCES
# why: 32-bit ALU on a pointer
add32 %r1, 8
mov %r0, 0
exit
