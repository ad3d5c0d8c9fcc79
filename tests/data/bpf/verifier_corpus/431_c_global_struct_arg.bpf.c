// expect: accept
// why: a global function taking a pointer to a 16-byte struct on the caller's stack: memory of 16 bytes, accepted
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
int global_struct(struct bpf_perf_event_data *ctx) {
  struct pair pr = {ctx->sample_period, ctx->addr};
  return second_big(&pr);
}

char LICENSE[] SEC("license") = "GPL";
