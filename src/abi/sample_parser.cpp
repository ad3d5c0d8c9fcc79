#include "abi/sample_parser.hpp"

#include <bit>
#include <cstring>
#include <utility>

#include "abi/sample_layout.hpp"
#include "support/byte_reader.hpp"

namespace userperf::abi {

namespace {

constexpr std::uint32_t kHeaderSize = sizeof(perf_event_header);
constexpr std::uint32_t kU64 = sizeof(std::uint64_t);
constexpr std::uint32_t kBranchEntrySize = sizeof(perf_branch_entry);

// Reads fields in order from [pos, end) of one record and records each one (a support::ByteReader
// over those bytes, offsets counted from the record's start). The first failure sticks: later
// reads do nothing, so the decoder can read on and check once.
class Cursor {
 public:
  Cursor(std::span<const std::uint8_t> record, std::uint32_t pos, std::uint32_t end,
         std::vector<SampleField>& fields)
      : in_(record.subspan(pos, end - pos), pos), fields_(fields) {}

  bool ok() const { return status_.ok(); }
  ParseStatus status() const { return status_; }
  std::uint32_t pos() const { return static_cast<std::uint32_t>(in_.offset()); }

  bool u64(const char* name, std::uint64_t& value, std::uint32_t index = 0) {
    return field(name, index, value);
  }

  bool u32(const char* name, std::uint32_t& value) { return field(name, 0, value); }

  // `count` elements of `element` bytes, sized from a count read out of the record: checked by
  // division so a huge count cannot wrap the multiplication. An empty array adds no field.
  bool array(const char* name, std::uint64_t count, std::uint32_t element, ByteRange& out) {
    if (!fits(count, element)) return false;
    out = ByteRange{pos(), static_cast<std::uint32_t>(count * element)};
    if (out.size == 0) return true;
    fields_.push_back(SampleField{name, 0, out.offset, out.size});
    return in_.skip(out.size);
  }

  // Whether `count` elements of `element` bytes fit before the end; fails the cursor if not.
  bool fits(std::uint64_t count, std::uint32_t element) {
    if (!ok()) return false;
    if (!in_.fits(count, element)) return fail(ParseError::kFieldOverrun);
    return true;
  }

  // An array of u64 copied out.
  bool u64_array(const char* name, std::uint64_t count, std::vector<std::uint64_t>& out) {
    const std::uint32_t at = pos();
    if (!fits(count, kU64)) return false;
    if (count != 0)
      fields_.push_back(SampleField{name, 0, at, static_cast<std::uint32_t>(count * kU64)});
    return in_.read_array(count, out);
  }

  bool fail(ParseError error) {
    if (ok()) status_ = ParseStatus{error, pos()};
    return false;
  }

  // The fields must end exactly at header.size.
  ParseStatus finish() {
    if (ok() && in_.remaining() != 0) status_ = ParseStatus{ParseError::kTrailingBytes, pos()};
    return status_;
  }

 private:
  template <class T>
  bool field(const char* name, std::uint32_t index, T& value) {
    if (!ok()) return false;
    const std::uint32_t at = pos();
    if (!in_.read(value)) return fail(ParseError::kFieldOverrun);
    fields_.push_back(SampleField{name, index, at, sizeof value});
    return true;
  }

  support::ByteReader in_;
  std::vector<SampleField>& fields_;
  ParseStatus status_;
};

// Common checks on the record header: the span holds the header and header.size bytes, and
// header.size is a whole number of 8-byte words.
ParseStatus check_header(std::span<const std::uint8_t> record, perf_event_header& header) {
  if (record.size() < kHeaderSize) return ParseStatus{ParseError::kTruncated, 0};
  std::memcpy(&header, record.data(), kHeaderSize);
  if (header.size < kHeaderSize || header.size % kU64 != 0) {
    return ParseStatus{ParseError::kBadRecordSize, 0};
  }
  if (header.size > record.size()) return ParseStatus{ParseError::kTruncated, 0};
  return ParseStatus{};
}

void read_format_block(Cursor& c, std::uint64_t format, ReadValues& out) {
  auto entry_tail = [&c, format](ReadEntry& e, std::uint32_t i) {
    if (format & PERF_FORMAT_ID) c.u64("read.id", e.id, i);
    if (format & PERF_FORMAT_LOST) c.u64("read.lost", e.lost, i);
  };
  if (!(format & PERF_FORMAT_GROUP)) {
    ReadEntry e;
    out.nr = 1;
    c.u64("read.value", e.value);
    if (format & PERF_FORMAT_TOTAL_TIME_ENABLED) c.u64("read.time_enabled", out.time_enabled);
    if (format & PERF_FORMAT_TOTAL_TIME_RUNNING) c.u64("read.time_running", out.time_running);
    entry_tail(e, 0);
    out.entries.push_back(e);
    return;
  }
  if (!c.u64("read.nr", out.nr)) return;
  if (format & PERF_FORMAT_TOTAL_TIME_ENABLED) c.u64("read.time_enabled", out.time_enabled);
  if (format & PERF_FORMAT_TOTAL_TIME_RUNNING) c.u64("read.time_running", out.time_running);
  // Bound nr by the bytes left before sizing anything by it.
  const auto entry = static_cast<std::uint32_t>(read_entry_size(format));
  if (!c.fits(out.nr, entry)) return;
  out.entries.resize(out.nr);
  for (std::uint32_t i = 0; i < out.nr; ++i) {
    c.u64("read.value", out.entries[i].value, i);
    entry_tail(out.entries[i], i);
  }
}

void regs_block(Cursor& c, const char* abi_name, const char* regs_name, std::uint64_t mask,
                SampleRegsValues& out) {
  out.mask = mask;
  if (!c.u64(abi_name, out.abi) || out.abi == PERF_SAMPLE_REGS_ABI_NONE) return;
  c.u64_array(regs_name, static_cast<std::uint64_t>(std::popcount(mask)), out.values);
}

// One reading of the body; `empty_stack_has_hw_idx` picks how a zero branch count is read.
// Sets *ambiguous when that choice mattered.
ParseStatus parse_body(std::span<const std::uint8_t> record, const SampleFormat& format,
                       bool empty_stack_has_hw_idx, ParsedSample& out, bool* ambiguous) {
  const std::uint64_t type = format.sample_type;
  out.sample_type = type;
  out.fields.push_back(SampleField{"header", 0, 0, kHeaderSize});
  Cursor c(record, kHeaderSize, out.header.size, out.fields);

  if (type & PERF_SAMPLE_IDENTIFIER) c.u64("identifier", out.identifier);
  if (type & PERF_SAMPLE_IP) c.u64("ip", out.ip);
  if (type & PERF_SAMPLE_TID) {
    c.u32("pid", out.pid);
    c.u32("tid", out.tid);
  }
  if (type & PERF_SAMPLE_TIME) c.u64("time", out.time);
  if (type & PERF_SAMPLE_ADDR) c.u64("addr", out.addr);
  if (type & PERF_SAMPLE_ID) c.u64("id", out.id);
  if (type & PERF_SAMPLE_STREAM_ID) c.u64("stream_id", out.stream_id);
  if (type & PERF_SAMPLE_CPU) {
    c.u32("cpu", out.cpu);
    c.u32("cpu_reserved", out.cpu_reserved);
  }
  if (type & PERF_SAMPLE_PERIOD) c.u64("period", out.period);
  if (type & PERF_SAMPLE_READ) read_format_block(c, format.read_format, out.read);
  if (type & PERF_SAMPLE_CALLCHAIN) {
    std::uint64_t nr = 0;
    if (c.u64("callchain.nr", nr)) c.u64_array("callchain.ips", nr, out.callchain);
  }
  if (type & PERF_SAMPLE_RAW) {
    if (c.u32("raw.size", out.raw_size)) c.array("raw.data", out.raw_size, 1, out.raw);
  }
  if (type & PERF_SAMPLE_BRANCH_STACK) {
    BranchStack& b = out.branch_stack;
    if (c.u64("branch_stack.nr", b.nr)) {
      if ((format.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) && b.nr == 0) {
        *ambiguous = true;
      }
      b.has_hw_idx = (format.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) &&
                     (b.nr != 0 || empty_stack_has_hw_idx);
      if (b.has_hw_idx) c.u64("branch_stack.hw_idx", b.hw_idx);
      c.array("branch_stack.entries", b.nr, kBranchEntrySize, b.entries);
      if (format.branch_sample_type & kBranchSampleCounters) {
        c.array("branch_stack.counters", b.nr, kU64, b.counters);
      }
    }
  }
  if (type & PERF_SAMPLE_REGS_USER) {
    regs_block(c, "regs_user.abi", "regs_user.regs", format.sample_regs_user, out.regs_user);
  }
  if (type & PERF_SAMPLE_STACK_USER) {
    if (c.u64("stack_user.size", out.stack_size) && out.stack_size != 0) {
      c.array("stack_user.data", out.stack_size, 1, out.stack);
      if (c.u64("stack_user.dyn_size", out.stack_dyn_size) && out.stack_dyn_size > out.stack_size) {
        return ParseStatus{ParseError::kBadValue, c.pos() - kU64};
      }
    }
  }
  if (type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
    const bool as_struct = (type & PERF_SAMPLE_WEIGHT_STRUCT) && !(type & PERF_SAMPLE_WEIGHT);
    if (c.u64(as_struct ? "weight_struct" : "weight", out.weight)) {
      std::memcpy(&out.weight_struct.var1, record.data() + c.pos() - kU64, 4);
      std::memcpy(&out.weight_struct.var2, record.data() + c.pos() - 4, 2);
      std::memcpy(&out.weight_struct.var3, record.data() + c.pos() - 2, 2);
    }
  }
  if (type & PERF_SAMPLE_DATA_SRC) c.u64("data_src", out.data_src);
  if (type & PERF_SAMPLE_TRANSACTION) c.u64("transaction", out.transaction);
  if (type & PERF_SAMPLE_REGS_INTR) {
    regs_block(c, "regs_intr.abi", "regs_intr.regs", format.sample_regs_intr, out.regs_intr);
  }
  if (type & PERF_SAMPLE_PHYS_ADDR) c.u64("phys_addr", out.phys_addr);
  if (type & PERF_SAMPLE_CGROUP) c.u64("cgroup", out.cgroup);
  if (type & PERF_SAMPLE_DATA_PAGE_SIZE) c.u64("data_page_size", out.data_page_size);
  if (type & PERF_SAMPLE_CODE_PAGE_SIZE) c.u64("code_page_size", out.code_page_size);
  if (type & PERF_SAMPLE_AUX) {
    if (c.u64("aux.size", out.aux_size)) c.array("aux.data", out.aux_size, 1, out.aux);
  }
  return c.finish();
}

// `v`'s storage, emptied, to be given back to the object after a reset.
template <class T>
std::vector<T> emptied(std::vector<T>& v) {
  std::vector<T> kept = std::move(v);
  kept.clear();
  return kept;
}

// Clears `out` for the next record but keeps the capacity of its vectors (the field list, the
// callchain, the read entries and the registers): a consumer that parses record after record into
// one object (the recorder's drain, the report's passes) allocates nothing once they are large
// enough.
void reset_keeping_capacity(ParsedSample& out) {
  std::vector<SampleField> fields = emptied(out.fields);
  std::vector<std::uint64_t> callchain = emptied(out.callchain);
  std::vector<ReadEntry> entries = emptied(out.read.entries);
  std::vector<std::uint64_t> user = emptied(out.regs_user.values);
  std::vector<std::uint64_t> intr = emptied(out.regs_intr.values);
  out = ParsedSample{};
  out.fields = std::move(fields);
  out.callchain = std::move(callchain);
  out.read.entries = std::move(entries);
  out.regs_user.values = std::move(user);
  out.regs_intr.values = std::move(intr);
}

void reset_keeping_capacity(ParsedSampleId& out) {
  std::vector<SampleField> fields = emptied(out.fields);
  out = ParsedSampleId{};
  out.fields = std::move(fields);
}

}  // namespace

SampleFormat SampleFormat::from_attr(const perf_event_attr& attr) {
  return SampleFormat{attr.sample_type, attr.read_format, attr.sample_regs_user,
                      attr.sample_regs_intr, attr.branch_sample_type};
}

const char* to_string(ParseError error) {
  switch (error) {
    case ParseError::kOk:
      return "ok";
    case ParseError::kTruncated:
      return "record truncated";
    case ParseError::kBadRecordSize:
      return "header.size not a multiple of 8 or below 8";
    case ParseError::kWrongType:
      return "wrong record type";
    case ParseError::kFieldOverrun:
      return "field runs past header.size";
    case ParseError::kBadValue:
      return "value contradicts the layout";
    case ParseError::kTrailingBytes:
      return "fields end before header.size";
  }
  return "unknown";
}

const SampleField* ParsedSample::field(const char* name, std::uint32_t index) const {
  for (const SampleField& f : fields) {
    if (f.index == index && std::strcmp(f.name, name) == 0) return &f;
  }
  return nullptr;
}

ParseStatus parse_sample(std::span<const std::uint8_t> record, const SampleFormat& format,
                         ParsedSample& out) {
  reset_keeping_capacity(out);
  if (const ParseStatus s = check_header(record, out.header); !s.ok()) return s;
  if (out.header.type != PERF_RECORD_SAMPLE) return ParseStatus{ParseError::kWrongType, 0};
  const perf_event_header header = out.header;

  bool ambiguous = false;
  const ParseStatus first = parse_body(record, format, false, out, &ambiguous);
  if (first.ok() || !ambiguous) return first;
  ParsedSample second;
  second.header = header;
  const ParseStatus retry = parse_body(record, format, true, second, &ambiguous);
  // Neither reading fits: report the one that got further.
  if (retry.ok() || retry.offset > first.offset) {
    out = std::move(second);
    return retry;
  }
  return first;
}

ParseStatus parse_sample_id(std::span<const std::uint8_t> record, std::uint64_t sample_type,
                            ParsedSampleId& out) {
  reset_keeping_capacity(out);
  perf_event_header header;
  if (const ParseStatus s = check_header(record, header); !s.ok()) return s;
  if (header.type == PERF_RECORD_SAMPLE) return ParseStatus{ParseError::kWrongType, 0};
  const auto trailer = static_cast<std::uint32_t>(id_header_size(sample_type));
  if (header.size < kHeaderSize + trailer) {
    return ParseStatus{ParseError::kFieldOverrun, kHeaderSize};
  }
  out.offset = header.size - trailer;
  Cursor c(record, out.offset, header.size, out.fields);
  if (sample_type & PERF_SAMPLE_TID) {
    c.u32("pid", out.pid);
    c.u32("tid", out.tid);
  }
  if (sample_type & PERF_SAMPLE_TIME) c.u64("time", out.time);
  if (sample_type & PERF_SAMPLE_ID) c.u64("id", out.id);
  if (sample_type & PERF_SAMPLE_STREAM_ID) c.u64("stream_id", out.stream_id);
  if (sample_type & PERF_SAMPLE_CPU) {
    c.u32("cpu", out.cpu);
    c.u32("cpu_reserved", out.cpu_reserved);
  }
  if (sample_type & PERF_SAMPLE_IDENTIFIER) c.u64("identifier", out.identifier);
  return c.finish();
}

}  // namespace userperf::abi
