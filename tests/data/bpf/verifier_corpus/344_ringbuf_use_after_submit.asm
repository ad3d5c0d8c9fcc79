# license: GPL
# map: rb ringbuf key=0 value=0 entries=4096
# expect: reject EACCES
# why: a store through a copy of the pointer after submit
lddw %r1, map:rb
mov %r2, 16
mov %r3, 0
call bpf_ringbuf_reserve
jeq %r0, 0, l0
mov %r6, %r0
mov %r1, %r0
mov %r2, 0
call bpf_ringbuf_submit
stdw [%r6+0], 1
l0:
mov %r0, 0
exit
