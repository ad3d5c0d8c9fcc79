# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: reject EINVAL
# why: an 8-byte value at r10-4 runs past the top of the stack
stw [%r10-8], 0
stw [%r10-4], 0
mov %r2, %r10
add %r2, -8
mov %r3, %r10
add %r3, -4
mov %r4, 0
lddw %r1, map:counts
call bpf_map_update_elem
mov %r0, 0
exit
