// The synthetic trace: 8-byte words, each a pure function of the seed and its stream position, so
// that any window of the stream can be checked exactly (what tests and benchmarks of the AUX path
// need from a source).
//
// Word at stream position 8*i (little-endian u64):
//   bits 63..16  i + 1                       (never 0: a zero word is padding or unwritten)
//   bits 15..0   (splitmix64(i) ^ seed) & 0xffff
// A decoder that does not know the seed still finds the window's position (from the top bits) and
// the seed's low 16 bits (from the first word), and checks every other word against them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "trace/aux_decoder.hpp"

namespace userperf::trace {

std::uint64_t synthetic_word(std::uint64_t seed, std::uint64_t index);

// Fills `out` (a multiple of 8 bytes) with the stream bytes from `position` (a multiple of 8).
void synthetic_fill(std::uint64_t seed, std::uint64_t position, std::span<std::uint8_t> out);

// Whether `bytes` are exactly the stream bytes that end at `end_position` (bytes before stream
// position 0 must be zero: an area never written that far). A mismatch is corrupt_at the byte
// offset of the first wrong word.
Expected<void> verify_synthetic(std::uint64_t seed, std::uint64_t end_position,
                                std::span<const std::uint8_t> bytes);

struct SyntheticWindow {
  std::uint64_t leading_zero = 0;    // zero bytes before the first word (never written)
  std::uint64_t start_position = 0;  // stream position of the first word
  std::uint64_t words = 0;
  std::uint16_t seed_low = 0;       // the seed's low 16 bits
  std::uint64_t trailing_zero = 0;  // zero padding after the last word
};

// Recognises a window: leading zeros, consecutive words of one stream, trailing zeros. What was
// recognised before a corrupt word stays in `out`.
Expected<void> decode_synthetic(std::span<const std::uint8_t> bytes, SyntheticWindow& out);

std::unique_ptr<AuxDecoder> make_synthetic_decoder();

}  // namespace userperf::trace
