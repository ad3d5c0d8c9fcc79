// expect: accept
// why: bpf_loop flags are checked at run time (-EINVAL), not by the verifier
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


static int count(__u32 index, void *data) {
  __u64 *n = data;
  *n += 1;
  return 0;
}

SEC("perf_event")
int loop_flags(struct bpf_perf_event_data *ctx) {
  __u64 n = 0;
  long ret = bpf_loop(4, count, &n, 1);
  return ret < 0;
}

char LICENSE[] SEC("license") = "GPL";
