# license: GPL
# expect: reject ENOTSUPP
# why: bpf_get_func_ip is not offered to perf_event programs
call bpf_get_func_ip
exit
