// expect: reject EACCES
// why: a ctx read past struct bpf_perf_event_data (offset 184)
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int ctx_out_of_bounds(struct bpf_perf_event_data *ctx) {
  const volatile __u64 *words = (const volatile __u64 *)ctx;
  return words[23] != 0;
}

char LICENSE[] SEC("license") = "GPL";
