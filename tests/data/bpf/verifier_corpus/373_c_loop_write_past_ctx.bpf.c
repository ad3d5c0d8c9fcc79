// expect: reject EACCES
// why: the callback writes 512 bytes past the u64 its caller passed: outside the caller's stack
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


static int overflow(__u32 index, void *data) {
  __u64 *p = data;
  p[64] = index;
  return 0;
}

SEC("perf_event")
int loop_past_ctx(struct bpf_perf_event_data *ctx) {
  __u64 v = 0;
  bpf_loop(2, overflow, &v, 0);
  return v != 0;
}

char LICENSE[] SEC("license") = "GPL";
