// Maps sized by the program that loads them, as bcc's libbpf-tools profile.bpf.c does: the
// STACK_TRACE map declares neither value_size nor max_entries (the loader sets both from its
// command line before the load), and `counts` is small until the loader enlarges it.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_helpers.h>

struct key_t {
  __u32 pid;
  __s32 user_stack_id;
};

struct {
  __uint(type, BPF_MAP_TYPE_STACK_TRACE);
  __type(key, __u32);
} stackmap SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __type(key, struct key_t);
  __type(value, __u64);
  __uint(max_entries, 2);
} counts SEC(".maps");

const volatile __u32 target_pid = 0;

SEC("perf_event")
int do_perf_event(struct bpf_perf_event_data* ctx) {
  struct key_t key = {};
  key.pid = bpf_get_current_pid_tgid() >> 32;
  if (target_pid && key.pid != target_pid) return 0;
  key.user_stack_id = bpf_get_stackid(ctx, &stackmap, BPF_F_USER_STACK);
  __u64 one = 1;
  __u64* count = bpf_map_lookup_elem(&counts, &key);
  if (count) {
    __sync_fetch_and_add(count, 1);
  } else {
    bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST);
  }
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
