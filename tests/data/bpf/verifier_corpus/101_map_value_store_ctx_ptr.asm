# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: accept
# why: storing the ctx pointer into a map value (privileged: allow_ptr_leaks)
mov %r6, %r1
stw [%r10-4], 0
mov %r2, %r10
add %r2, -4
lddw %r1, map:counts
call bpf_map_lookup_elem
jeq %r0, 0, out
stxdw [%r0+0], %r6
mov %r0, 0
out:
exit
