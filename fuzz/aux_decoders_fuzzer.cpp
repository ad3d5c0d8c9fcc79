// AUX trace bytes -> the decoder of each source (make_decoder: synthetic, calltrace, log), the
// first input byte choosing the format. What aux_decoder.hpp promises, checked per input:
// - decoding never reads outside the bytes given (libFuzzer's input is an exactly sized heap copy,
//   so ASan sees an overread);
// - a corrupt stream is corrupt_at: EINVAL, a message, and an offset inside the input;
// - every line appended starts with the indent and ends with a newline, and the lines decoded
//   before the corrupt byte stay (the text only grows);
// - the structured decoder (decode_synthetic/decode_calltrace/decode_log) agrees: same verdict,
//   same offset; decoding is deterministic.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trace/aux_decoder.hpp"
#include "trace/calltrace_format.hpp"
#include "trace/log_format.hpp"
#include "trace/synthetic_format.hpp"

using namespace userperf;

namespace {

[[noreturn]] void broken(const char* format, const char* what, std::uint64_t a = 0) {
  std::fprintf(stderr, "aux_decoders invariant broken (%s): %s (%#llx)\n", format, what,
               static_cast<unsigned long long>(a));
  std::abort();
}

std::string symbolize(std::uint64_t address, void*) {
  return (address & 1) != 0 ? std::string() : "fn+0x" + std::to_string(address & 0xff);
}

std::uint64_t offset_of(const Expected<void>& result) {
  return result ? Error::kNoOffset : result.error().offset;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static constexpr const char* kFormats[] = {"synthetic", "calltrace", "log"};
  const char* format = kFormats[data[0] % 3];
  const std::span<const std::uint8_t> bytes(data + 1, size - 1);

  auto decoder = trace::make_decoder(format);
  if (decoder == nullptr) broken(format, "no decoder");
  if (std::string_view(decoder->format()) != format) broken(format, "format() names another");
  if ((data[0] & 4) != 0) decoder->set_symbolizer(symbolize, nullptr);

  constexpr std::string_view kIndent = "  |";
  std::string text = "kept\n";  // a decoder appends; what was there stays
  const Expected<void> decoded = decoder->decode(bytes, kIndent, text);
  if (text.compare(0, 5, "kept\n") != 0) broken(format, "earlier text changed");
  if (!decoded) {
    const Error& error = decoded.error();
    if (error.code != EINVAL) broken(format, "error code", static_cast<std::uint64_t>(error.code));
    if (error.message.empty()) broken(format, "error without a message");
    if (!error.has_offset() || error.offset >= bytes.size()) {
      broken(format, "corrupt offset outside the input", error.offset);
    }
  }
  for (std::size_t line = 5; line < text.size();) {
    if (text.compare(line, kIndent.size(), kIndent) != 0)
      broken(format, "line without indent", line);
    const std::size_t end = text.find('\n', line);
    if (end == std::string::npos) broken(format, "line without newline", line);
    line = end + 1;
  }

  Expected<void> structured;
  switch (data[0] % 3) {
    case 0: {
      trace::SyntheticWindow window;
      structured = trace::decode_synthetic(bytes, window);
      if (structured &&
          window.leading_zero + window.words * 8 + window.trailing_zero != bytes.size()) {
        broken(format, "synthetic window does not cover the input", window.words);
      }
      break;
    }
    case 1: {
      std::vector<trace::CallEvent> events;
      std::uint64_t skipped = 0;
      structured = trace::decode_calltrace(bytes, events, &skipped);
      if (skipped > bytes.size()) broken(format, "skipped past the input", skipped);
      (void)trace::call_stack_after(events);
      break;
    }
    default: {
      std::vector<trace::LogRecord> records;
      std::uint64_t skipped = 0;
      structured = trace::decode_log(bytes, records, &skipped);
      if (skipped > bytes.size()) broken(format, "skipped past the input", skipped);
      std::uint64_t previous_end = skipped;
      for (const trace::LogRecord& record : records) {
        if (record.offset < previous_end) broken(format, "log records overlap", record.offset);
        previous_end = record.offset + trace::log_record_bytes(record.payload.size());
        if (previous_end > bytes.size()) broken(format, "log record past the input", record.offset);
      }
    }
  }
  if (structured.ok() != decoded.ok() || offset_of(structured) != offset_of(decoded)) {
    broken(format, "structured and text decoders disagree", offset_of(structured));
  }

  std::string again = "kept\n";
  const Expected<void> redone = decoder->decode(bytes, kIndent, again);
  if (again != text || offset_of(redone) != offset_of(decoded)) broken(format, "not deterministic");
  return 0;
}
