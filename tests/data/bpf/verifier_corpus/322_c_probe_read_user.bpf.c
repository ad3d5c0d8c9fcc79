// expect: accept
// why: probe_read_user from the sample's addr into a stack buffer, Dual BSD/GPL licence
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int probe_read_user(struct bpf_perf_event_data *ctx) {
  __u64 word = 0;
  if (bpf_probe_read_user(&word, sizeof(word), (const void *)ctx->addr) != 0) return 1;
  return word != 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
