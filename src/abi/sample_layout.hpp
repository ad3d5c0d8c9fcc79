// Record sizes derived from perf_event_attr, as the kernel caches them at open
// (__perf_event_header_size, __perf_event_id_header_size, __perf_event_read_size).
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>

namespace userperf::abi {

constexpr std::uint64_t kMaxRecordSize = 0xffff;    // header.size is a u16
constexpr std::uint64_t kMaxAlignedRecord = 65528;  // the largest 8-byte-aligned record

constexpr std::uint64_t align8(std::uint64_t n) {
  return (n + 7) & ~std::uint64_t{7};
}

// Bytes of one {value, [id], [lost]} entry.
std::size_t read_entry_size(std::uint64_t read_format);

// Bytes of the read_format block for a group (or single event) of nr_members events.
std::size_t read_format_size(std::uint64_t read_format, std::size_t nr_members);

// Fixed-size u64 body fields of PERF_RECORD_SAMPLE other than the sample_id ones (IP, ADDR,
// PERIOD, WEIGHT, DATA_SRC, TRANSACTION, PHYS_ADDR, CGROUP, DATA/CODE_PAGE_SIZE). READ is sized
// separately: its length follows the group, which can change after open.
std::size_t sample_header_size(std::uint64_t sample_type);

// The sample_id fields (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER): the trailer of non-sample
// records when sample_id_all is set, and fixed fields of a sample.
std::size_t id_header_size(std::uint64_t sample_type);

// The trailer size on non-SAMPLE records of this event.
inline std::size_t sample_id_trailer_size(const perf_event_attr& attr) {
  return attr.sample_id_all ? id_header_size(attr.sample_type) : 0;
}

}  // namespace userperf::abi
