// A bpf_loop callback: the function's address is an lddw with src=BPF_PSEUDO_FUNC, and the
// callback is appended like a called subprogram. (The kernel wants BTF func_info for it.)
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

static int add_step(__u32 index, void *data) {
  __u64 *sum = data;
  *sum += index;
  return 0;
}

static __noinline int is_kept(__u64 value) {
  return (value & 0xf) != 0;
}

SEC("perf_event")
int callback_loop(struct bpf_perf_event_data *ctx) {
  __u64 sum = ctx->sample_period & 0xff;
  bpf_loop(8, add_step, &sum, 0);
  return is_kept(sum);
}

char LICENSE[] SEC("license") = "GPL";
