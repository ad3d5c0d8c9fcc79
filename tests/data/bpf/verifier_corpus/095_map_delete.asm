# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: accept
# why: delete with a key on the stack
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:counts
call bpf_map_delete_elem
exit
