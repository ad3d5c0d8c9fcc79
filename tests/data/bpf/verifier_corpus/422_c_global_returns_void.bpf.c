// expect: reject EINVAL
// why: a global function returning void: the kernel wants global functions to return a scalar
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

__attribute__((noinline)) void set_one(__u64 *p) {
  if (p)
    *p = 1;
}

SEC("perf_event")
int global_void(struct bpf_perf_event_data *ctx) {
  __u64 v = 0;
  set_one(&v);
  return v;
}

char LICENSE[] SEC("license") = "GPL";
