// BTF-defined maps of several kinds, keys/values given as types and as sizes, used through lookup,
// update, bpf_perf_event_output and bpf_get_stackid.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#define MAX_STACK_DEPTH 127

struct counts {
  __u64 samples;
  __u64 period_sum;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1024);
  __type(key, __u32);
  __type(value, struct counts);
  __uint(map_flags, BPF_F_NO_PREALLOC);
} by_stack SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 4);
  __type(key, __u32);
  __type(value, __u64);
} config SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, sizeof(struct counts));
} per_cpu_totals SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 256);
  __type(key, __u64);
  __type(value, __u32);
} recent_addrs SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, sizeof(__u32));
} events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_STACK_TRACE);
  __uint(max_entries, 64);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, MAX_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

SEC("perf_event")
int count_stacks(struct bpf_perf_event_data *ctx) {
  __u32 zero = 0;
  __u64 *threshold = bpf_map_lookup_elem(&config, &zero);
  if (threshold && ctx->sample_period < *threshold) return 0;

  long id = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
  if (id >= 0) {
    __u32 key = (__u32)id;
    struct counts *c = bpf_map_lookup_elem(&by_stack, &key);
    if (c) {
      c->samples++;
      c->period_sum += ctx->sample_period;
    } else {
      struct counts first = {1, ctx->sample_period};
      bpf_map_update_elem(&by_stack, &key, &first, BPF_ANY);
    }
  }

  struct counts *total = bpf_map_lookup_elem(&per_cpu_totals, &zero);
  if (total) total->samples++;

  __u64 addr = ctx->addr;
  __u32 seen = 1;
  bpf_map_update_elem(&recent_addrs, &addr, &seen, BPF_ANY);

  struct counts out = {1, ctx->sample_period};
  bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &out, sizeof(out));
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
