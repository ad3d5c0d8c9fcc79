// Global data: .rodata (const volatile), .data, .bss, a custom .data.* section, a string literal
// (.rodata.str1.1) and bpf_printk's format (.rodata); and a BTF map, which comes before them.
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

const volatile __u64 min_period = 5000;
const volatile __u32 filter_enabled = 1;
__u64 samples_seen = 7;
__u64 bytes_total;
__u64 kept_count;
__u32 custom_marker __attribute__((section(".data.custom"))) = 0xabcd1234;

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} drops SEC(".maps");

SEC("perf_event")
int globals_filter(struct bpf_perf_event_data *ctx) {
  samples_seen++;
  custom_marker++;
  bytes_total += ctx->addr & 0xff;
  if (!filter_enabled) return 1;
  if (ctx->sample_period < min_period) {
    bpf_printk("drop period %llu", ctx->sample_period);
    __u32 zero = 0;
    __u64 *count = bpf_map_lookup_elem(&drops, &zero);
    if (count) *count += 1;
    return 0;
  }
  kept_count++;
  bpf_trace_printk("keep\n", sizeof("keep\n"));
  return 1;
}

char LICENSE[] SEC("license") = "GPL";
