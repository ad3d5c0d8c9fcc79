// Global (non-static) functions of each argument kind the kernel's btf_prepare_func_args knows,
// and a static one: the ELF loader reads their BTF prototypes into ProgramImage::btf_funcs. A
// loader fixture only: the verifiers refuse it (a void result, a void * argument).
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct pair {
  __u64 a, b;
};

enum mode { MODE_A, MODE_B };

__attribute__((noinline)) int mixed(struct bpf_perf_event_data *ctx, __u64 x, enum mode m,
                                    struct pair *p, const volatile __u32 *q) {
  return ctx != 0 && x > 1 && m == MODE_B && p != 0 && q != 0;
}

__attribute__((noinline)) int untyped(void *p) {
  return p != 0;
}

__attribute__((noinline)) void no_result(__u64 *p) {
  if (p)
    *p = 1;
}

static __attribute__((noinline)) int local_twice(int x) {
  return x * 2;
}

SEC("perf_event")
int global_funcs(struct bpf_perf_event_data *ctx) {
  struct pair pr = {ctx->sample_period, ctx->addr};
  __u32 small = 3;
  __u64 v = 0;
  no_result(&v);
  return mixed(ctx, v, MODE_B, &pr, &small) + untyped(&v) + local_twice(v);
}

char LICENSE[] SEC("license") = "GPL";
