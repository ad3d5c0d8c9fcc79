// expect: accept
// why: a global function whose body the kernel would refuse, called only on a branch a frozen .rodata flag rules out: never called, never verified
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

const volatile int enabled = 0;

__attribute__((noinline)) int unchecked(__u64 *p) {
  return *p > 1;
}

SEC("perf_event")
int global_never_called(struct bpf_perf_event_data *ctx) {
  __u64 v = ctx->sample_period;
  if (enabled)
    return unchecked(&v);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
