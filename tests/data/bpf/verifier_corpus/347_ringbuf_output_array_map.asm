# license: GPL
# map: four array key=4 value=8 entries=4
# expect: reject EINVAL
# why: bpf_ringbuf_output into an ARRAY map
stdw [%r10-8], 1
mov %r2, %r10
add %r2, -8
mov %r3, 8
mov %r4, 0
lddw %r1, map:four
call bpf_ringbuf_output
exit
