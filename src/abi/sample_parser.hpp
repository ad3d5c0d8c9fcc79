// Decoder of PERF_RECORD_SAMPLE bodies and of the sample_id trailer of other records
// (kernel-perf-spec §2.2–2.4), in the kernel's emission order (perf_output_sample).
//
// The record bytes are untrusted: every length and count is checked against header.size before it
// is used, so a truncated or corrupt record yields an error with the offset where decoding stopped,
// never a read past header.size (or past the span, whichever is smaller).
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace userperf::abi {

// PERF_SAMPLE_BRANCH_COUNTERS (6.8): the 6.1 uapi header predates it.
inline constexpr std::uint64_t kBranchSampleCounters = 1ULL << 19;

// The parts of perf_event_attr that decide a sample's layout.
struct SampleFormat {
  std::uint64_t sample_type = 0;
  std::uint64_t read_format = 0;
  std::uint64_t sample_regs_user = 0;
  std::uint64_t sample_regs_intr = 0;
  std::uint64_t branch_sample_type = 0;

  static SampleFormat from_attr(const perf_event_attr& attr);
};

enum class ParseError {
  kOk,
  kTruncated,      // the span is shorter than 8 bytes or than header.size
  kBadRecordSize,  // header.size < 8 or not a multiple of 8
  kWrongType,      // parse_sample on a non-SAMPLE record, parse_sample_id on a SAMPLE
  kFieldOverrun,   // a field (fixed size or sized by a count in the record) runs past header.size
  kBadValue,       // a value contradicts the layout (STACK_USER dyn_size > size)
  kTrailingBytes,  // the fields end before header.size
};
const char* to_string(ParseError error);

struct ParseStatus {
  ParseError error = ParseError::kOk;
  std::uint32_t offset = 0;  // record offset of the field that failed (or of the trailing bytes)
  bool ok() const { return error == ParseError::kOk; }
};

// One field of the record as laid out, header included. Repeated elements (read_format group
// entries) carry their entry number in `index`; arrays (callchain, registers, stack bytes) are one
// field each. `name` points to a string literal.
struct SampleField {
  const char* name;
  std::uint32_t index;
  std::uint32_t offset;
  std::uint32_t size;
};

struct ReadEntry {
  std::uint64_t value = 0;
  std::uint64_t id = 0;    // PERF_FORMAT_ID
  std::uint64_t lost = 0;  // PERF_FORMAT_LOST
};

struct ReadValues {
  std::uint64_t nr = 0;  // entries; 1 without PERF_FORMAT_GROUP
  std::uint64_t time_enabled = 0;
  std::uint64_t time_running = 0;
  std::vector<ReadEntry> entries;
};

struct SampleRegsValues {
  std::uint64_t abi = 0;              // PERF_SAMPLE_REGS_ABI_*; 0 means no registers follow
  std::uint64_t mask = 0;             // the attr mask the values follow
  std::vector<std::uint64_t> values;  // ascending mask-bit order
};

// A byte range of the record (RAW data, stack dump, AUX data).
struct ByteRange {
  std::uint32_t offset = 0;  // from the start of the record
  std::uint32_t size = 0;
};

struct BranchStack {
  std::uint64_t nr = 0;
  bool has_hw_idx = false;
  std::uint64_t hw_idx = 0;
  ByteRange entries;   // nr x struct perf_branch_entry (24 bytes)
  ByteRange counters;  // nr x u64 with PERF_SAMPLE_BRANCH_COUNTERS, else empty
};

// PERF_SAMPLE_WEIGHT_STRUCT's view of the weight word (little endian).
struct WeightStruct {
  std::uint32_t var1 = 0;
  std::uint16_t var2 = 0;
  std::uint16_t var3 = 0;
};

struct ParsedSample {
  perf_event_header header{};
  std::uint64_t sample_type = 0;
  std::vector<SampleField> fields;  // in record order, starting with the header

  std::uint64_t identifier = 0;
  std::uint64_t ip = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::uint64_t time = 0;
  std::uint64_t addr = 0;
  std::uint64_t id = 0;
  std::uint64_t stream_id = 0;
  std::uint32_t cpu = 0;
  std::uint32_t cpu_reserved = 0;
  std::uint64_t period = 0;
  ReadValues read;
  std::vector<std::uint64_t> callchain;  // context markers included
  std::uint32_t raw_size = 0;            // the u32 size field: data plus padding
  ByteRange raw;                         // the raw_size bytes after it
  BranchStack branch_stack;
  SampleRegsValues regs_user;
  std::uint64_t stack_size = 0;  // 0: no bytes and no dyn_size follow
  ByteRange stack;               // the stack_size bytes of the dump
  std::uint64_t stack_dyn_size = 0;
  std::uint64_t weight = 0;  // WEIGHT or WEIGHT_STRUCT
  WeightStruct weight_struct;
  std::uint64_t data_src = 0;
  std::uint64_t transaction = 0;
  SampleRegsValues regs_intr;
  std::uint64_t phys_addr = 0;
  std::uint64_t cgroup = 0;
  std::uint64_t data_page_size = 0;
  std::uint64_t code_page_size = 0;
  std::uint64_t aux_size = 0;
  ByteRange aux;

  // The first field with this name (and index), or nullptr.
  const SampleField* field(const char* name, std::uint32_t index = 0) const;
};

// Decodes a PERF_RECORD_SAMPLE. `record` starts at the header; bytes past header.size are ignored.
// The fields must consume exactly header.size bytes.
// `out` is reset first but its vectors keep their capacity: parsing record after record into
// one ParsedSample allocates nothing once they are large enough.
//
// BRANCH_STACK with PERF_SAMPLE_BRANCH_HW_INDEX is ambiguous when nr is 0: the kernel omits hw_idx
// when the PMU supplied no branch stack at all but writes it for an empty one. Both readings are
// tried, the one without hw_idx first; the one that consumes exactly header.size wins.
ParseStatus parse_sample(std::span<const std::uint8_t> record, const SampleFormat& format,
                         ParsedSample& out);

// The sample_id trailer of a non-SAMPLE record written with attr.sample_id_all (spec §2.2).
struct ParsedSampleId {
  std::vector<SampleField> fields;  // record offsets, in trailer order
  std::uint32_t offset = 0;         // where the trailer starts (= header.size - its size)
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::uint64_t time = 0;
  std::uint64_t id = 0;
  std::uint64_t stream_id = 0;
  std::uint32_t cpu = 0;
  std::uint32_t cpu_reserved = 0;
  std::uint64_t identifier = 0;
};

// Decodes the trailer from the end of a non-SAMPLE record. The record must hold its header and the
// whole trailer; the body in between is not looked at. As parse_sample, `out` keeps its field
// list's capacity.
ParseStatus parse_sample_id(std::span<const std::uint8_t> record, std::uint64_t sample_type,
                            ParsedSampleId& out);

}  // namespace userperf::abi
