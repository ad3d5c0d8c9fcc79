// The synthetic format: words are a pure function of (seed, position); a window of the stream is
// recognised and checked exactly, with or without the seed.
#include <gtest/gtest.h>

#include <vector>

#include "trace/synthetic_format.hpp"
#include "trace/words.hpp"
#include "unit/trace/corrupt_offset.hpp"

namespace userperf::trace {
namespace {

std::vector<std::uint8_t> stream(std::uint64_t seed, std::uint64_t position, std::size_t bytes) {
  std::vector<std::uint8_t> out(bytes);
  synthetic_fill(seed, position, out);
  return out;
}

TEST(SyntheticFormat, WordsArePureAndNeverZero) {
  for (std::uint64_t i = 0; i < 4096; ++i) {
    EXPECT_NE(synthetic_word(0, i), 0u);
    EXPECT_EQ(synthetic_word(7, i), synthetic_word(7, i));
  }
  EXPECT_NE(synthetic_word(1, 5), synthetic_word(2, 5));
  EXPECT_NE(synthetic_word(1, 5), synthetic_word(1, 6));
}

TEST(SyntheticFormat, VerifiesAnyWindowExactly) {
  const std::uint64_t seed = 0x1234'5678'9abc;
  const auto bytes = stream(seed, 800, 256);
  EXPECT_TRUE(verify_synthetic(seed, 800 + 256, bytes));
  EXPECT_FALSE(verify_synthetic(seed, 800 + 264, bytes));  // the wrong position
  EXPECT_FALSE(verify_synthetic(seed + 1, 800 + 256, bytes));

  auto corrupt = bytes;
  corrupt[75] ^= 0x10;
  EXPECT_EQ(corrupt_offset(verify_synthetic(seed, 800 + 256, corrupt)), 72u);
}

TEST(SyntheticFormat, VerifiesUnwrittenBytesBeforePositionZero) {
  std::vector<std::uint8_t> window(64, 0);
  const auto head = stream(3, 0, 32);
  std::copy(head.begin(), head.end(), window.begin() + 32);
  EXPECT_TRUE(verify_synthetic(3, 32, window));
  window[0] = 1;
  EXPECT_FALSE(verify_synthetic(3, 32, window));
}

TEST(SyntheticFormat, DecoderFindsPositionAndSeedBits) {
  auto bytes = stream(0xbeef, 4096, 512);
  bytes.insert(bytes.begin(), 16, 0);  // never written
  bytes.insert(bytes.end(), 24, 0);    // a sample's zero padding
  SyntheticWindow w;
  const Expected<void> decoded = decode_synthetic(bytes, w);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(w.leading_zero, 16u);
  EXPECT_EQ(w.start_position, 4096u);
  EXPECT_EQ(w.words, 64u);
  EXPECT_EQ(w.seed_low, 0xbeef);
  EXPECT_EQ(w.trailing_zero, 24u);
}

TEST(SyntheticFormat, DecoderNamesTheFirstMismatch) {
  auto bytes = stream(9, 0, 256);
  store_unit(bytes.data() + 128, synthetic_word(9, 100));  // a word from elsewhere
  SyntheticWindow w;
  EXPECT_EQ(corrupt_offset(decode_synthetic(bytes, w)), 128u);
  EXPECT_EQ(w.words, 16u);

  auto padded = stream(9, 0, 64);
  padded.resize(80, 0);
  padded.push_back(1);
  EXPECT_EQ(corrupt_offset(decode_synthetic(padded, w)), 80u);  // not a multiple of 8
}

TEST(SyntheticFormat, TextDecoderDescribesTheWindow) {
  auto decoder = make_decoder("synthetic");
  ASSERT_NE(decoder, nullptr);
  EXPECT_STREQ(decoder->format(), "synthetic");
  const auto bytes = stream(0x42, 64, 64);
  std::string out;
  ASSERT_TRUE(decoder->decode(bytes, "  ", out));
  EXPECT_EQ(out.rfind("  synthetic: stream [0x40, 0x80) 8 words", 0), 0u) << out;
  EXPECT_EQ(make_decoder("nope"), nullptr);
}

}  // namespace
}  // namespace userperf::trace
