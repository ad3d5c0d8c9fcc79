// expect: accept
// why: nr_loops from the sample period (unknown): the callback's iterations converge because the changed counters are widened (nothing reads them after the loop: a later `s.calls > 3` makes them precise and the kernel gives up with E2BIG after ~90 s)
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>


struct state {
  __u64 sum;
  __u64 calls;
};

static int accumulate(__u32 index, void *data) {
  struct state *s = data;
  s->sum += index;
  s->calls++;
  return 0;
}

SEC("perf_event")
int loop_unknown(struct bpf_perf_event_data *ctx) {
  struct state s = {0, 0};
  bpf_loop(ctx->sample_period, accumulate, &s, 0);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
