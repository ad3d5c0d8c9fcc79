// Decoders for the AUX trace formats of userperf's sources (synthetic, calltrace, log): what a
// consumer uses to turn AUX bytes (an AUX sample's newest bytes, or a span of the AUX area) into
// items. A decoder never trusts its input: a corrupt stream ends with an error naming the byte
// offset, never a read outside the bytes given.
//
// The trace module depends on support alone (its Error): sources (pmu/) use its encoders,
// consumers (report's script printer, tools) its decoders.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "support/expected.hpp"

namespace userperf::trace {

// A corrupt stream: EINVAL, what is wrong, and the offset into the decoded span of the first
// undecodable byte. Every decoder of every format says it this way.
inline Error corrupt_at(std::uint64_t offset, const char* what) {
  return make_error(EINVAL, what, offset);
}

// Resolves a code address to "symbol+0xoff" (or returns empty to print the address).
using Symbolize = std::string (*)(std::uint64_t address, void* context);

class AuxDecoder {
 public:
  virtual ~AuxDecoder() = default;
  // The source's PMU name: "synthetic", "calltrace" or "log".
  virtual const char* format() const = 0;
  // Decodes `bytes`, a window of a trace that may begin mid-stream (an AUX sample holds the newest
  // bytes, zero-padded at the end to 8), and appends one text line per item to `out`, each line
  // starting with `indent`. The first corrupt byte is corrupt_at its offset (the lines decoded
  // before it stay in `out`).
  virtual Expected<void> decode(std::span<const std::uint8_t> bytes, std::string_view indent,
                                std::string& out) const = 0;
  // Optional symbolization of code addresses in decoded lines.
  void set_symbolizer(Symbolize fn, void* context) {
    symbolize_ = fn;
    symbolize_context_ = context;
  }

 protected:
  Symbolize symbolize_ = nullptr;
  void* symbolize_context_ = nullptr;
};

// The decoder for a source's PMU name; nullptr when userperf has no source of that name.
std::unique_ptr<AuxDecoder> make_decoder(std::string_view pmu_name);

}  // namespace userperf::trace
