# license: GPL
# map: rb ringbuf key=0 value=0 entries=4096
# map: progs prog_array key=4 value=4 entries=4
# expect: reject EINVAL
# why: a tail call while a reserved record is held
mov %r6, %r1
lddw %r1, map:rb
mov %r2, 16
mov %r3, 0
call bpf_ringbuf_reserve
jeq %r0, 0, l0
mov %r7, %r0
mov %r1, %r6
lddw %r2, map:progs
mov %r3, 0
call bpf_tail_call
mov %r1, %r7
mov %r2, 0
call bpf_ringbuf_submit
l0:
mov %r0, 0
exit
