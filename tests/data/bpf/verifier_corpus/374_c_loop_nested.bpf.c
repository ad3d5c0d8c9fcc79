// expect: accept
// why: a bpf_loop callback calls bpf_loop with another callback (three frames)
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


static int inner(__u32 index, void *data) {
  __u64 *sum = data;
  *sum += index;
  return 0;
}

static int outer(__u32 index, void *data) {
  bpf_loop(3, inner, data, 0);
  return 0;
}

SEC("perf_event")
int loop_nested(struct bpf_perf_event_data *ctx) {
  __u64 sum = 0;
  bpf_loop(4, outer, &sum, 0);
  return sum == 12;
}

char LICENSE[] SEC("license") = "GPL";
