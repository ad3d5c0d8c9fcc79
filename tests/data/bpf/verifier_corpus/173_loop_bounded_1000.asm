# license: GPL
# expect: accept
# why: a counted loop of 1000 iterations
mov %r0, 0
mov %r1, 0
loop:
add %r0, 3
add %r1, 1
jlt %r1, 1000, loop
exit
