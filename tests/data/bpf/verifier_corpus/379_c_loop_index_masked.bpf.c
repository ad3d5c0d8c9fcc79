// expect: accept
// why: the callback indexes an array in its context with index & 7
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


struct slots {
  __u64 v[8];
};

static int fill(__u32 index, void *data) {
  struct slots *s = data;
  s->v[index & 7] = index;
  return 0;
}

SEC("perf_event")
int loop_index_masked(struct bpf_perf_event_data *ctx) {
  struct slots s = {};
  bpf_loop(8, fill, &s, 0);
  return s.v[3] == 3;
}

char LICENSE[] SEC("license") = "GPL";
