# license: GPL
# map: counts hash key=4 value=8 entries=16
# expect: accept
# why: lookup with a key on the stack that was never written (privileged: allow_uninit_stack)
mov %r2, %r10
add %r2, -4
lddw %r1, map:counts
call bpf_map_lookup_elem
mov %r0, 0
exit
