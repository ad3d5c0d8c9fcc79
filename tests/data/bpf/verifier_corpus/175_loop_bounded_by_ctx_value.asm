# license: GPL
# expect: accept
# why: a loop bounded by a ctx value clamped to 0..15
ldxdw %r2, [%r1+168]
and %r2, 15
mov %r0, 0
mov %r1, 0
loop:
jge %r1, %r2, out
add %r0, 2
add %r1, 1
ja loop
out:
exit
