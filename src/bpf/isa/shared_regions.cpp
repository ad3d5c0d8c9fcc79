#include "bpf/isa/shared_regions.hpp"

#include <atomic>
#include <mutex>

namespace userperf::bpf {
namespace {

constexpr std::size_t kCapacity = 4096;
MemoryRegion table[kCapacity];
std::atomic<std::size_t> published{0};  // entries [0, published) are written
std::mutex writers;

}  // namespace

bool add_shared_region(const MemoryRegion& region) {
  if (region.begin == region.end) return true;
  std::lock_guard lock(writers);
  const std::size_t n = published.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < n; ++i) {
    const MemoryRegion& r = table[i];
    if (r.begin == region.begin && r.end == region.end && r.writable == region.writable) {
      return true;
    }
  }
  if (n == kCapacity) return false;
  table[n] = region;
  published.store(n + 1, std::memory_order_release);
  return true;
}

std::span<const MemoryRegion> shared_regions() {
  return {table, published.load(std::memory_order_acquire)};
}

}  // namespace userperf::bpf
