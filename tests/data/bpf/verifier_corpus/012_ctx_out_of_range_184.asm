# license: GPL
# expect: reject EACCES
# why: ctx load at offset 184 = sizeof(struct bpf_perf_event_data)
ldxdw %r0, [%r1+184]
exit
