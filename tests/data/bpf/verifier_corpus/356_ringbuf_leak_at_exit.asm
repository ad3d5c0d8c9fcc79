# license: GPL
# map: rb ringbuf key=0 value=0 entries=4096
# expect: reject EINVAL
# why: reserve and exit without submit
lddw %r1, map:rb
mov %r2, 16
mov %r3, 0
call bpf_ringbuf_reserve
mov %r0, 0
exit
