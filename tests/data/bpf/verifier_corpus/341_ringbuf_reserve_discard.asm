# license: GPL
# map: rb ringbuf key=0 value=0 entries=4096
# expect: accept
# why: reserve, NULL check, discard with BPF_RB_FORCE_WAKEUP
lddw %r1, map:rb
mov %r2, 16
mov %r3, 0
call bpf_ringbuf_reserve
jeq %r0, 0, l0
mov %r1, %r0
mov %r2, 2
call bpf_ringbuf_discard
l0:
mov %r0, 0
exit
