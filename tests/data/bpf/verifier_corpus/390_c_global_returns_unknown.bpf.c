// expect: reject EACCES
// why: a global function returns a bounded value, but callers see an unknown scalar: indexing with it is refused
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


__attribute__((noinline)) int small(__u64 x) {
  return x & 3;
}

SEC("perf_event")
int global_ret(struct bpf_perf_event_data *ctx) {
  __u64 arr[4] = {1, 2, 3, 4};
  int i = small(ctx->sample_period);
  return arr[i];
}

char LICENSE[] SEC("license") = "GPL";
