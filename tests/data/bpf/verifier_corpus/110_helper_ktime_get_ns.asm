# license: GPL
# expect: accept
# why: bpf_ktime_get_ns, no arguments
call bpf_ktime_get_ns
exit
