# license: GPL
# expect: reject EACCES
# why: trace_printk's format must be readable memory: ctx is not
mov %r2, 8
call bpf_trace_printk
mov %r0, 0
exit
