# license: GPL
# map: ro array key=4 value=16 entries=1 flags=0x80
# expect: accept
# why: load from a BPF_F_RDONLY_PROG array
lddw %r1, map_value:ro+0
ldxdw %r0, [%r1+8]
exit
