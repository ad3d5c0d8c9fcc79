# license: GPL
# map: rb ringbuf key=0 value=0 entries=4096
# expect: accept
# why: submit on one branch, discard on the other
lddw %r1, map:rb
mov %r2, 16
mov %r3, 0
call bpf_ringbuf_reserve
jeq %r0, 0, l1
mov %r6, %r0
call bpf_get_prandom_u32
mov %r1, %r6
mov %r2, 0
jeq %r0, 0, l0
call bpf_ringbuf_submit
ja l1
l0:
call bpf_ringbuf_discard
l1:
mov %r0, 0
exit
