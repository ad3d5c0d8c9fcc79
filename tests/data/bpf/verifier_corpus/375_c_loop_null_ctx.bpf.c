// expect: accept
// why: bpf_loop with a NULL callback context the callback does not touch
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


static int tick(__u32 index, void *data) {
  return index == 5;
}

SEC("perf_event")
int loop_null_ctx(struct bpf_perf_event_data *ctx) {
  return bpf_loop(10, tick, NULL, 0);
}

char LICENSE[] SEC("license") = "GPL";
