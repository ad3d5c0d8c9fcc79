# license: GPL
# expect: accept
# why: a counted loop of 10 iterations
mov %r0, 0
mov %r1, 0
loop:
add %r0, %r1
add %r1, 1
jlt %r1, 10, loop
exit
