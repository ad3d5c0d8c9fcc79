// bpf_loop end to end: a callback walks `addr & 0xff` steps over a context on the program's
// stack, adding each index to a sum until it reaches `addr >> 8`, and runs a nested bpf_loop of
// two steps each time; a second bpf_loop with flags 1 must fail with -EINVAL. The results go to
// an array: [0] bpf_loop's return, [1] the sum, [2] the nested loops' total, [3] the bad call's
// return.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, __u64);
} result SEC(".maps");

struct walk {
  __u64 sum;
  __u64 limit;
  __u64 inner;
};

static int inner_step(__u32 index, void *data) {
  struct walk *w = data;
  w->inner += index + 1;
  return 0;
}

static int step(__u32 index, void *data) {
  struct walk *w = data;
  w->sum += index;
  bpf_loop(2, inner_step, data, 0);
  if (w->sum >= w->limit) return 1;
  return 0;
}

static void put(__u32 key, __u64 value) {
  __u64 *slot = bpf_map_lookup_elem(&result, &key);
  if (slot) *slot = value;
}

SEC("perf_event")
int loop_counter(struct bpf_perf_event_data *ctx) {
  struct walk w = {0, ctx->addr >> 8, 0};
  long calls = bpf_loop(ctx->addr & 0xff, step, &w, 0);
  long bad = bpf_loop(1, step, &w, 1);
  put(0, calls);
  put(1, w.sum);
  put(2, w.inner);
  put(3, bad);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
