# license: GPL
# map: rb ringbuf key=0 value=0 entries=4096
# expect: accept
# why: reserve 16 bytes, NULL check, fill both words, submit
lddw %r1, map:rb
mov %r2, 16
mov %r3, 0
call bpf_ringbuf_reserve
jeq %r0, 0, l0
stdw [%r0+0], 1
stdw [%r0+8], 2
mov %r1, %r0
mov %r2, 0
call bpf_ringbuf_submit
l0:
mov %r0, 0
exit
