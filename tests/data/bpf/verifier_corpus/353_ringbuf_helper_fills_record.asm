# license: GPL
# map: rb ringbuf key=0 value=0 entries=4096
# expect: accept
# why: bpf_get_current_comm writes 16 bytes into the record
lddw %r1, map:rb
mov %r2, 16
mov %r3, 0
call bpf_ringbuf_reserve
jeq %r0, 0, l0
mov %r6, %r0
mov %r1, %r0
mov %r2, 16
call bpf_get_current_comm
mov %r1, %r6
mov %r2, 0
call bpf_ringbuf_submit
l0:
mov %r0, 0
exit
