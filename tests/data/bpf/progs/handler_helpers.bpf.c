// Overflow-handler fixture: one program per helper behaviour; each stores what the helper
// returned in `results` so the test can compare it with the kernel's semantics. `config` holds
// the test's inputs.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 8);
  __type(key, __u32);
  __type(value, __u64);
} config SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 8);
  __type(key, __u32);
  __type(value, __u64);
} results SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, sizeof(__u32));
  __uint(max_entries, 4);
} outputs SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_STACK_TRACE);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, 16 * sizeof(__u64));
  __uint(max_entries, 64);
} stacks SEC(".maps");

static __always_inline __u64 cfg(__u32 i) {
  __u64* v = bpf_map_lookup_elem(&config, &i);
  return v ? *v : 0;
}

static __always_inline void put(__u32 i, __u64 value) {
  bpf_map_update_elem(&results, &i, &value, BPF_ANY);
}

// config[0] = flags for bpf_perf_event_output; results[0] = its return value.
SEC("perf_event")
int output(struct bpf_perf_event_data* ctx) {
  char payload[5] = {1, 2, 3, 4, 5};
  put(0, bpf_perf_event_output(ctx, &outputs, cfg(0), payload, sizeof payload));
  return 1;
}

// results[0] = get_stackid(user stack, skip config[0]); results[1..] = get_stack's bytes, ips.
SEC("perf_event")
int stacks_prog(struct bpf_perf_event_data* ctx) {
  __u64 ips[4] = {};
  put(0, bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK | (cfg(0) & 0xff)));
  put(1, bpf_get_stack(ctx, ips, sizeof ips, BPF_F_USER_STACK));
  put(2, ips[0]);
  put(3, ips[1]);
  put(4, bpf_get_stack(ctx, ips, sizeof ips, 0));  // the kernel part: empty in user space
  return 1;
}

// results[0] = perf_prog_read_value's return, [1..3] = counter, enabled, running; [4] = its
// return for a wrong size.
SEC("perf_event")
int read_value(struct bpf_perf_event_data* ctx) {
  struct bpf_perf_event_value value = {};
  put(0, bpf_perf_prog_read_value(ctx, &value, sizeof value));
  put(1, value.counter);
  put(2, value.enabled);
  put(3, value.running);
  put(4, bpf_perf_prog_read_value(ctx, &value, sizeof value - 8));
  return 1;
}

// results[0] = probe_read_user of config[0]'s address, [1] = the value read, [2] = probe_read_user
// of address 8 (never mapped), [3] = pid_tgid, [4] = trace_printk's return, [5] = the comm's
// first 8 bytes.
SEC("perf_event")
int task_and_memory(struct bpf_perf_event_data* ctx) {
  __u64 value = 0;
  put(0, bpf_probe_read_user(&value, sizeof value, (const void*)cfg(0)));
  put(1, value);
  put(2, bpf_probe_read_user(&value, sizeof value, (const void*)8));
  put(3, bpf_get_current_pid_tgid());
  put(4, bpf_printk("period %llu addr %llx", ctx->sample_period, ctx->addr));
  char comm[16] = {};
  bpf_get_current_comm(comm, sizeof comm);
  put(5, *(__u64*)comm);
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
