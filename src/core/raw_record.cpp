#include "core/raw_record.hpp"

#include "abi/sample_layout.hpp"

namespace userperf::core {

std::uint64_t RawRecord::prepare() {
  std::uint64_t sum = 0;
  for (const RawFragment* f = &frag; f != nullptr; f = f->next) {
    sum += f->size;
    // Unlike the kernel we refuse a payload that would overflow header.size instead of
    // truncating it into a corrupt record (kernel-perf-spec §2.1).
    if (sum > abi::kMaxAlignedRecord) return 0;
  }
  const std::uint64_t total = abi::align8(sum + sizeof(std::uint32_t));
  size = static_cast<std::uint32_t>(total - sizeof(std::uint32_t));
  pad = static_cast<std::uint32_t>(size - sum);
  return total;
}

}  // namespace userperf::core
