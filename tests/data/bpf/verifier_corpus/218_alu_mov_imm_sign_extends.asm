# license: GPL
# map: vals array key=4 value=64 entries=4
# expect: reject EINVAL
# why: mov r, -1 sign-extends to 64 bits: rsh 32 leaves 0xffffffff, far past the value
stw [%r10-4], 1
mov %r2, %r10
add %r2, -4
lddw %r1, map:vals
call bpf_map_lookup_elem
jeq %r0, 0, out
mov %r6, -1
rsh %r6, 32
add %r0, %r6
ldxb %r0, [%r0+0]
out:
exit
