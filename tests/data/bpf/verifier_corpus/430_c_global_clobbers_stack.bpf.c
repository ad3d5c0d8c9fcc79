// expect: reject EINVAL
// why: a bounded index on the caller's stack passed to a global function is unknown after the call (the callee may write anything there): indexing with it is refused
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

__attribute__((noinline)) int halve_two(__u64 *p) {
  if (p && *p == 2)
    *p = 1;
  return 0;
}

SEC("perf_event")
int global_clobbers(struct bpf_perf_event_data *ctx) {
  __u64 arr[4] = {1, 2, 3, 4};
  __u64 i = ctx->sample_period & 3;
  halve_two(&i);
  return arr[i];
}

char LICENSE[] SEC("license") = "GPL";
