#include "abi/sample_layout.hpp"

#include <bit>

namespace userperf::abi {

std::size_t read_entry_size(std::uint64_t read_format) {
  std::size_t entry = sizeof(std::uint64_t);  // value
  if (read_format & PERF_FORMAT_ID) entry += sizeof(std::uint64_t);
  if (read_format & PERF_FORMAT_LOST) entry += sizeof(std::uint64_t);
  return entry;
}

std::size_t read_format_size(std::uint64_t read_format, std::size_t nr_members) {
  std::size_t entry = read_entry_size(read_format);
  std::size_t size = 0;
  if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) size += sizeof(std::uint64_t);
  if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) size += sizeof(std::uint64_t);
  if (read_format & PERF_FORMAT_GROUP) {
    size += sizeof(std::uint64_t);  // nr
    entry *= nr_members;
  }
  return size + entry;
}

std::size_t sample_header_size(std::uint64_t type) {
  constexpr std::uint64_t kFixedU64 = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD |
                                      PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT |
                                      PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |
                                      PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |
                                      PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE;
  return sizeof(std::uint64_t) * static_cast<std::size_t>(std::popcount(type & kFixedU64));
}

std::size_t id_header_size(std::uint64_t sample_type) {
  constexpr std::uint64_t kIdFields = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                                      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
                                      PERF_SAMPLE_IDENTIFIER;
  return sizeof(std::uint64_t) * static_cast<std::size_t>(std::popcount(sample_type & kIdFields));
}

}  // namespace userperf::abi
