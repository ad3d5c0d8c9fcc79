# license: GPL
# expect: reject EINVAL
# why: bpf_skb_load_bytes is not a perf_event helper
mov %r2, 0
mov %r3, %r10
add %r3, -8
mov %r4, 8
call bpf_skb_load_bytes
exit
