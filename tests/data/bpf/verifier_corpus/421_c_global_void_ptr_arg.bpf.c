// expect: reject EINVAL
// why: a global function taking void *: the pointee has no size, so the prototype is refused at the call
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

__attribute__((noinline)) int not_null(void *p) {
  return p != 0;
}

SEC("perf_event")
int global_void_ptr(struct bpf_perf_event_data *ctx) {
  __u64 v = ctx->sample_period;
  return not_null(&v);
}

char LICENSE[] SEC("license") = "GPL";
