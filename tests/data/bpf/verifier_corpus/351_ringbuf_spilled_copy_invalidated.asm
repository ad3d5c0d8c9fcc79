# license: GPL
# map: rb ringbuf key=0 value=0 entries=4096
# expect: reject EACCES
# why: a copy spilled to the stack, filled after submit and dereferenced
lddw %r1, map:rb
mov %r2, 16
mov %r3, 0
call bpf_ringbuf_reserve
jeq %r0, 0, l0
stxdw [%r10-8], %r0
mov %r1, %r0
mov %r2, 0
call bpf_ringbuf_submit
ldxdw %r1, [%r10-8]
ldxdw %r0, [%r1+0]
l0:
mov %r0, 0
exit
