# license: GPL
# map: four array key=4 value=8 entries=4
# expect: reject EINVAL
# why: bpf_ringbuf_reserve from an ARRAY map
lddw %r1, map:four
mov %r2, 8
mov %r3, 0
call bpf_ringbuf_reserve
jeq %r0, 0, l0
mov %r1, %r0
mov %r2, 0
call bpf_ringbuf_submit
l0:
mov %r0, 0
exit
