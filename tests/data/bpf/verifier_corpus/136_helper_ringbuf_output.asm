# license: GPL
# map: rb ringbuf key=0 value=0 entries=4096
# expect: accept
# why: ringbuf_output of 8 stack bytes
stdw [%r10-8], 1
mov %r2, %r10
add %r2, -8
mov %r3, 8
mov %r4, 0
lddw %r1, map:rb
call bpf_ringbuf_output
exit
