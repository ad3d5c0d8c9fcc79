// A PROG_ARRAY initialised statically (libbpf: `.values = { [1] = &target }`, relocations in
// .rel.maps): the loader reads the slot, the registry loads `target` and stores it there, so
// `entry`'s tail call reaches it (1: the sample is kept) instead of falling through (0).
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int target(struct bpf_perf_event_data* ctx) {
  return 1;
}

struct {
  __uint(type, BPF_MAP_TYPE_PROG_ARRAY);
  __uint(max_entries, 2);
  __uint(key_size, sizeof(__u32));
  __array(values, int(void*));
} jmp SEC(".maps") = {
    .values = {[1] = (void*)&target},
};

SEC("perf_event")
int entry(struct bpf_perf_event_data* ctx) {
  bpf_tail_call(ctx, &jmp, 1);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
