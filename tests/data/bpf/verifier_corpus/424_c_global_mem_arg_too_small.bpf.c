// expect: reject EINVAL
// why: a global function taking a 16-byte struct pointer given 8 bytes of the caller's stack: the call is refused
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct pair {
  __u64 a, b;
};

__attribute__((noinline)) int second_big(struct pair *p) {
  return p ? p->b > 3 : 0;
}

SEC("perf_event")
int global_mem_small(struct bpf_perf_event_data *ctx) {
  __u64 v = ctx->sample_period;
  return second_big((struct pair *)&v);
}

char LICENSE[] SEC("license") = "GPL";
