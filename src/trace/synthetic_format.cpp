#include "trace/synthetic_format.hpp"

#include <cinttypes>
#include <cstdio>

#include "trace/words.hpp"

namespace userperf::trace {

namespace {

constexpr unsigned kTagBits = 16;
constexpr std::uint64_t kTagMask = (std::uint64_t{1} << kTagBits) - 1;

std::uint16_t tag_of(std::uint64_t seed_low, std::uint64_t index) {
  return static_cast<std::uint16_t>((splitmix64(index) ^ seed_low) & kTagMask);
}

class SyntheticDecoder final : public AuxDecoder {
 public:
  const char* format() const override { return "synthetic"; }
  Expected<void> decode(std::span<const std::uint8_t> bytes, std::string_view indent,
                        std::string& out) const override {
    SyntheticWindow w;
    Expected<void> decoded = decode_synthetic(bytes, w);
    char line[192];
    if (w.words == 0) {
      std::snprintf(line, sizeof line, "synthetic: no words (%zu zero bytes)", bytes.size());
    } else {
      std::snprintf(line, sizeof line,
                    "synthetic: stream [%#" PRIx64 ", %#" PRIx64 ") %" PRIu64
                    " words, seed low bits %#06x, %" PRIu64 " zero bytes before, %" PRIu64
                    " after%s",
                    w.start_position, w.start_position + w.words * kUnitBytes, w.words,
                    static_cast<unsigned>(w.seed_low), w.leading_zero, w.trailing_zero,
                    decoded ? "" : " (then corrupt)");
    }
    out.append(indent);
    out += line;
    out += '\n';
    return decoded;
  }
};

}  // namespace

std::uint64_t synthetic_word(std::uint64_t seed, std::uint64_t index) {
  return ((index + 1) << kTagBits) | tag_of(seed & kTagMask, index);
}

void synthetic_fill(std::uint64_t seed, std::uint64_t position, std::span<std::uint8_t> out) {
  const std::uint64_t first = position / kUnitBytes;
  for (std::size_t i = 0; i + kUnitBytes <= out.size(); i += kUnitBytes) {
    store_unit(out.data() + i, synthetic_word(seed, first + i / kUnitBytes));
  }
}

Expected<void> verify_synthetic(std::uint64_t seed, std::uint64_t end_position,
                                std::span<const std::uint8_t> bytes) {
  if (bytes.size() % kUnitBytes != 0 || end_position % kUnitBytes != 0) {
    return corrupt_at(bytes.size() - bytes.size() % kUnitBytes, "not a multiple of 8 bytes");
  }
  // Position of the window's first byte, as a signed distance from stream position 0.
  const auto start =
      static_cast<std::int64_t>(end_position) - static_cast<std::int64_t>(bytes.size());
  for (std::size_t off = 0; off < bytes.size(); off += kUnitBytes) {
    const std::int64_t pos = start + static_cast<std::int64_t>(off);
    const std::uint64_t want =
        pos < 0 ? 0 : synthetic_word(seed, static_cast<std::uint64_t>(pos) / kUnitBytes);
    if (load_unit(bytes, off) != want) return corrupt_at(off, "word differs from the stream");
  }
  return {};
}

Expected<void> decode_synthetic(std::span<const std::uint8_t> bytes, SyntheticWindow& out) {
  out = SyntheticWindow{};
  const std::size_t whole = bytes.size() - bytes.size() % kUnitBytes;
  std::size_t off = 0;
  while (off < whole && load_unit(bytes, off) == 0) off += kUnitBytes;
  out.leading_zero = off;
  if (off == whole) {
    out.leading_zero = whole;
    if (whole != bytes.size()) return corrupt_at(whole, "window is not a multiple of 8 bytes");
    return {};
  }
  const std::uint64_t first = load_unit(bytes, off);
  if ((first >> kTagBits) == 0) return corrupt_at(off, "not a synthetic word");
  const std::uint64_t index = (first >> kTagBits) - 1;
  out.start_position = index * kUnitBytes;
  out.seed_low = static_cast<std::uint16_t>((first ^ splitmix64(index)) & kTagMask);
  for (; off < whole; off += kUnitBytes) {
    const std::uint64_t word = load_unit(bytes, off);
    if (word == 0) break;
    if (word != synthetic_word(out.seed_low, index + out.words)) {
      return corrupt_at(off, "word does not continue the stream");
    }
    ++out.words;
  }
  for (; off < whole; off += kUnitBytes) {
    if (load_unit(bytes, off) != 0) return corrupt_at(off, "data after the zero padding");
    out.trailing_zero += kUnitBytes;
  }
  if (whole != bytes.size()) return corrupt_at(whole, "window is not a multiple of 8 bytes");
  return {};
}

std::unique_ptr<AuxDecoder> make_synthetic_decoder() {
  return std::make_unique<SyntheticDecoder>();
}

}  // namespace userperf::trace
