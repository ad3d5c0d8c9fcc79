// expect: accept
// why: global data in .bss (an internal array map, direct value access)
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

__u64 samples = 0;

SEC("perf_event")
int bss_counter(struct bpf_perf_event_data *ctx) {
  samples += 1;
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
