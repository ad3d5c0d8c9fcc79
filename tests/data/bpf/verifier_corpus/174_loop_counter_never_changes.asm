# license: GPL
# expect: reject E2BIG
# why: a loop whose counter is never incremented
mov %r0, 0
mov %r1, 0
loop:
add %r0, 1
jlt %r1, 10, loop
exit
