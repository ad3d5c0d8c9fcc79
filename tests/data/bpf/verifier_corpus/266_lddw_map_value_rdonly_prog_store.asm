# license: GPL
# map: ro array key=4 value=16 entries=1 flags=0x80
# expect: reject EACCES
# why: store into a BPF_F_RDONLY_PROG array
lddw %r1, map_value:ro+0
stdw [%r1+0], 1
mov %r0, 0
exit
