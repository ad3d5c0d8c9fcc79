# license: GPL
# map: cfg array key=4 value=16 entries=1
# expect: accept
# why: store through a direct map value address
lddw %r1, map_value:cfg+0
stdw [%r1+8], 1
mov %r0, 0
exit
