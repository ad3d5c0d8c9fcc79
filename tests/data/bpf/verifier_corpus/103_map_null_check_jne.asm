# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: accept
# why: NULL check written as jne r0, 0
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:counts
call bpf_map_lookup_elem
jne %r0, 0, use
exit
use:
ldxdw %r0, [%r0+0]
exit
