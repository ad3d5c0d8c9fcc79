#include "trace/log_format.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "trace/text.hpp"
#include "trace/words.hpp"

namespace userperf::trace {

namespace {

constexpr std::uint64_t kMagic = 0xa7;
constexpr unsigned kMagicShift = 56;
constexpr unsigned kCheckShift = 48;
constexpr unsigned kLengthShift = 32;
constexpr std::uint64_t kCheckMask = std::uint64_t{0xff} << kCheckShift;

std::uint64_t check_of(std::uint64_t word0_without_check, std::uint64_t time) {
  return splitmix64(word0_without_check ^ splitmix64(time)) & 0xff;
}

struct Header {
  std::uint32_t tid;
  std::size_t length;
  std::uint64_t time;
  std::size_t bytes;  // the whole record
};

// The header at `off` if it is one and its record fits in the window.
bool parse_header(std::span<const std::uint8_t> bytes, std::size_t off, Header& h) {
  if (bytes.size() - off < kLogHeaderBytes) return false;
  const std::uint64_t w0 = load_unit(bytes, off);
  const std::uint64_t time = load_unit(bytes, off + 8);
  if ((w0 >> kMagicShift) != kMagic) return false;
  if (((w0 & kCheckMask) >> kCheckShift) != check_of(w0 & ~kCheckMask, time)) return false;
  h.tid = static_cast<std::uint32_t>(w0);
  h.length = static_cast<std::size_t>((w0 >> kLengthShift) & 0xffff);
  h.time = time;
  h.bytes = log_record_bytes(h.length);
  if (h.bytes > bytes.size() - off) return false;
  // The padding before the payload is zero.
  const std::size_t pad = h.bytes - kLogHeaderBytes - h.length;
  for (std::size_t i = 0; i < pad; ++i) {
    if (bytes[off + kLogHeaderBytes + i] != 0) return false;
  }
  return true;
}

// The end of the window's data: bytes from here on are zero (padding).
std::size_t data_end(std::span<const std::uint8_t> bytes) {
  std::size_t end = bytes.size();
  while (end > 0 && bytes[end - 1] == 0) --end;
  return end;
}

// Whether a chain of up to kLogResyncChain valid records starts at `off` (reaching the padding or
// the window's end counts as valid).
bool chain_starts_at(std::span<const std::uint8_t> bytes, std::size_t end, std::size_t off) {
  for (int n = 0; n < kLogResyncChain; ++n) {
    Header h;
    if (!parse_header(bytes, off, h)) return false;
    off += h.bytes;
    if (off >= end) return true;
  }
  return true;
}

class LogDecoder final : public AuxDecoder {
 public:
  const char* format() const override { return "log"; }
  Expected<void> decode(std::span<const std::uint8_t> bytes, std::string_view indent,
                        std::string& out) const override {
    std::vector<LogRecord> records;
    std::uint64_t skipped = 0;
    Expected<void> decoded = decode_log(bytes, records, &skipped);
    char line[96];
    if (skipped != 0) {
      std::snprintf(line, sizeof line, "log: %" PRIu64 " bytes before the first record", skipped);
      out.append(indent);
      out += line;
      out += '\n';
    }
    for (const LogRecord& r : records) {
      out.append(indent);
      append_time(out, r.time);
      std::snprintf(line, sizeof line, " tid %" PRIu32 ": ", r.tid);
      out += line;
      append_escaped(out, r.payload);
      out += '\n';
    }
    return decoded;
  }
};

}  // namespace

std::size_t log_record_prefix(std::uint32_t tid, std::uint64_t time, std::size_t length,
                              std::uint8_t (&out)[kLogMaxPrefix]) {
  const std::uint64_t w0 =
      (kMagic << kMagicShift) | (static_cast<std::uint64_t>(length & 0xffff) << kLengthShift) | tid;
  store_unit(out, w0 | (check_of(w0, time) << kCheckShift));
  store_unit(out + 8, time);
  const std::size_t pad = log_record_bytes(length) - kLogHeaderBytes - length;
  std::memset(out + kLogHeaderBytes, 0, pad);
  return kLogHeaderBytes + pad;
}

Expected<void> decode_log(std::span<const std::uint8_t> bytes, std::vector<LogRecord>& out,
                          std::uint64_t* skipped) {
  const std::size_t whole = bytes.size() - bytes.size() % kUnitBytes;
  const std::span<const std::uint8_t> units = bytes.first(whole);
  const std::size_t end = data_end(units);
  std::size_t off = 0;
  while (off < end && !chain_starts_at(units, end, off)) off += kUnitBytes;
  if (off >= end) off = whole;  // no record starts in the window
  if (skipped != nullptr) *skipped = off;
  while (off < end) {
    Header h;
    if (load_unit(units, off) == 0) {
      std::size_t nonzero = off;
      while (units[nonzero] == 0) ++nonzero;
      return corrupt_at(nonzero & ~std::size_t{7}, "data after zero padding");
    }
    if (!parse_header(units, off, h)) return corrupt_at(off, "not a valid record header");
    LogRecord r;
    r.tid = h.tid;
    r.time = h.time;
    r.offset = off;
    const std::size_t payload = off + h.bytes - h.length;
    r.payload.assign(reinterpret_cast<const char*>(units.data() + payload), h.length);
    out.push_back(std::move(r));
    off += h.bytes;
  }
  if (whole != bytes.size()) return corrupt_at(whole, "window is not a multiple of 8 bytes");
  return {};
}

std::unique_ptr<AuxDecoder> make_log_decoder() {
  return std::make_unique<LogDecoder>();
}

}  // namespace userperf::trace
