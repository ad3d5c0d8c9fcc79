# license: GPL
# map: vals array key=4 value=64 entries=4
# expect: reject EINVAL
# why: x % 8 is in 0..7: 8 * that indexes a 64-byte value
ldxdw %r6, [%r1+168]
stw [%r10-4], 1
mov %r2, %r10
add %r2, -4
lddw %r1, map:vals
call bpf_map_lookup_elem
jeq %r0, 0, out
mod %r6, 8
lsh %r6, 3
add %r0, %r6
ldxdw %r0, [%r0+0]
out:
exit
