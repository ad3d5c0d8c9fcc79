# license: GPL
# map: rb ringbuf key=0 value=0 entries=4096
# expect: accept
# why: bpf_ringbuf_query(BPF_RB_AVAIL_DATA)
lddw %r1, map:rb
mov %r2, 0
call bpf_ringbuf_query
exit
