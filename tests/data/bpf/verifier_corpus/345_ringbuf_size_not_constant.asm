# license: GPL
# map: rb ringbuf key=0 value=0 entries=4096
# expect: reject EACCES
# why: reserve's size must be a known constant
call bpf_get_prandom_u32
and %r0, 63
mov %r2, %r0
lddw %r1, map:rb
mov %r3, 0
call bpf_ringbuf_reserve
jeq %r0, 0, l0
mov %r1, %r0
mov %r2, 0
call bpf_ringbuf_submit
l0:
mov %r0, 0
exit
