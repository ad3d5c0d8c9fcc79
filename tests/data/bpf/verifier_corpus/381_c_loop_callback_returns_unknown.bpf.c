// expect: reject EINVAL
// why: the callback returns a value read from its context: not known to be 0 or 1
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


static int ret_data(__u32 index, void *data) {
  __u64 *v = data;
  return *v;
}

SEC("perf_event")
int loop_ret_unknown(struct bpf_perf_event_data *ctx) {
  __u64 v = ctx->sample_period;
  bpf_loop(2, ret_data, &v, 0);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
