# license: GPL
# map: rb ringbuf key=0 value=0 entries=4096
# expect: reject EACCES
# why: submit before the NULL check: ringbuf_mem_or_null is not ringbuf_mem
lddw %r1, map:rb
mov %r2, 16
mov %r3, 0
call bpf_ringbuf_reserve
mov %r1, %r0
mov %r2, 0
call bpf_ringbuf_submit
mov %r0, 0
exit
