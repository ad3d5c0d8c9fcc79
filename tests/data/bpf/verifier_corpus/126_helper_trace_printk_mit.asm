# license: MIT
# expect: reject EINVAL
# why: bpf_trace_printk is GPL-only
stw [%r10-8], 0x216968
stw [%r10-4], 0
mov %r1, %r10
add %r1, -8
mov %r2, 4
call bpf_trace_printk
mov %r0, 0
exit
