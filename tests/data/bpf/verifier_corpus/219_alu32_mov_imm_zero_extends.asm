# license: GPL
# map: vals array key=4 value=64 entries=4
# expect: accept
# why: mov32 r, -1 zero-extends: rsh 26 leaves 63, a valid byte index
stw [%r10-4], 1
mov %r2, %r10
add %r2, -4
lddw %r1, map:vals
call bpf_map_lookup_elem
jeq %r0, 0, out
mov32 %r6, -1
rsh %r6, 26
add %r0, %r6
ldxb %r0, [%r0+0]
out:
exit
