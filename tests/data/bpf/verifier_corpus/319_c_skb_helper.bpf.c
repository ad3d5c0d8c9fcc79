// expect: reject EINVAL
// why: bpf_skb_load_bytes is not a perf_event helper
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int skb_helper(struct bpf_perf_event_data *ctx) {
  __u64 word = 0;
  bpf_skb_load_bytes(ctx, 0, &word, sizeof(word));
  return word != 0;
}

char LICENSE[] SEC("license") = "GPL";
