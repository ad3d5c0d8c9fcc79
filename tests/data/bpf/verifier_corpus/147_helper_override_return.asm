# license: GPL
# expect: reject EINVAL
# why: bpf_override_return is for kprobes only
mov %r2, 0
call bpf_override_return
mov %r0, 0
exit
