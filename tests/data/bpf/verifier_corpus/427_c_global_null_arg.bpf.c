// expect: accept
// why: NULL passed for a global function's pointer argument: accepted, the function checks it
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

__attribute__((noinline)) int above_one(__u64 *p) {
  if (!p)
    return 0;
  return *p > 1;
}

SEC("perf_event")
int global_null(struct bpf_perf_event_data *ctx) {
  return above_one(0);
}

char LICENSE[] SEC("license") = "GPL";
