# license: GPL
# map: cfg array key=4 value=16 entries=1
# expect: reject EINVAL
# why: direct map value offset 16 of a 16-byte value
lddw %r1, map_value:cfg+16
mov %r0, 0
exit
