# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: accept
# why: update with key and value on the stack, flags BPF_ANY
stw [%r10-4], 0
stdw [%r10-16], 1
mov %r2, %r10
add %r2, -4
mov %r3, %r10
add %r3, -16
mov %r4, 0
lddw %r1, map:counts
call bpf_map_update_elem
mov %r0, 0
exit
