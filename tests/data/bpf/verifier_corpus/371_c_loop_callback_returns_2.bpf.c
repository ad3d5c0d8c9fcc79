// expect: reject EINVAL
// why: a bpf_loop callback must return 0 or 1: returning 2 is refused at the callback's exit
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


static int bad_return(__u32 index, void *data) {
  return 2;
}

SEC("perf_event")
int loop_returns_2(struct bpf_perf_event_data *ctx) {
  __u64 sum = 0;
  bpf_loop(4, bad_return, &sum, 0);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
