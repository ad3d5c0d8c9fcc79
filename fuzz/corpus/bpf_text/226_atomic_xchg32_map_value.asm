# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: accept
# why: 32-bit xchg on a map value
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:counts
call bpf_map_lookup_elem
jeq %r0, 0, out
mov %r1, 1
lock xchg32 [%r0+4], %r1
mov %r0, %r1
out:
exit
