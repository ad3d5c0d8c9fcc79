# license: GPL
# expect: reject EACCES
# why: probe_read_kernel with a scalar destination
mov %r3, 0
mov %r1, 0
mov %r2, 8
call bpf_probe_read_kernel
exit
