# license: GPL
# expect: accept
# why: probe_read_kernel into the stack from any address
mov %r3, %r1
mov %r1, %r10
add %r1, -8
mov %r2, 8
call bpf_probe_read_kernel
exit
