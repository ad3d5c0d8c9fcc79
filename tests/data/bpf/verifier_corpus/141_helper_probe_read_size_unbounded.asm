# license: GPL
# expect: reject EACCES
# why: probe_read_kernel with an unbounded size
ldxdw %r2, [%r1+168]
mov %r3, 0
mov %r1, %r10
add %r1, -8
call bpf_probe_read_kernel
exit
