# license: GPL
# map: rb ringbuf key=0 value=0 entries=4096
# expect: reject EACCES
# why: submit of a stack pointer
mov %r1, %r10
add %r1, -8
mov %r2, 0
call bpf_ringbuf_submit
mov %r0, 0
exit
