# license: GPL
# expect: reject E2BIG
# why: a counted loop of 1,000,000 iterations exhausts the 1M-insn budget
mov %r0, 0
mov %r1, 0
loop:
add %r0, %r1
add %r1, 1
jlt %r1, 1000000, loop
exit
