// Sections as cloudflare/ebpf_exporter writes them: "perf_event/" and the event's attributes.
// libbpf knows only "perf_event"; the exporter registers the prefix as perf_event with
// libbpf_register_prog_handler, and the kernel then accepts the programs. userperf's loader gives
// them the perf_event type (unit LoaderFixtures.*, tests/integration/bpf_verify_test.sh).
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>

#include <bpf/bpf_helpers.h>

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} periods SEC(".maps");

SEC("perf_event/type=0,config=3,frequency=1")
int on_cache_miss(struct bpf_perf_event_data* ctx) {
  __u32 key = 0;
  __u64* total = bpf_map_lookup_elem(&periods, &key);
  if (total) *total += ctx->sample_period;
  return 0;
}

// Only the "perf_event/" prefix: a section merely starting with the letters is no perf_event one.
SEC("perf_events")
int not_perf_event(void* ctx) {
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
