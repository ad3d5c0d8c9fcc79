// Every decoder over corrupted real streams (bit flips, truncations, windows cut anywhere): an
// error names an offset inside the input, and nothing is read outside it (each case decodes a
// heap copy of exactly its bytes, so ASan catches an overread).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "trace/calltrace_format.hpp"
#include "trace/log_format.hpp"
#include "trace/synthetic_format.hpp"
#include "unit/trace/corrupt_offset.hpp"

namespace userperf::trace {
namespace {

std::vector<std::uint8_t> synthetic_stream() {
  std::vector<std::uint8_t> out(4096);
  synthetic_fill(77, 8192, out);
  return out;
}

std::vector<std::uint8_t> calltrace_stream() {
  std::mt19937_64 rng(5);
  CalltraceEncoder encoder;
  std::vector<std::uint8_t> out;
  std::uint64_t now = 1'000'000;
  for (int i = 0; i < 400; ++i) {
    now += rng() % 2 == 0 ? rng() % 4000 : rng() % 100'000'000;
    const CallEntry e =
        encoder.encode(rng() % 2 == 0, rng() & 0xffff'ffff'ffff, rng() % 3 == 0 ? 0 : rng(), now);
    encoder.commit(e);
    const auto* p = reinterpret_cast<const std::uint8_t*>(e.units);
    out.insert(out.end(), p, p + e.bytes);
  }
  return out;
}

std::vector<std::uint8_t> log_stream() {
  std::mt19937_64 rng(6);
  std::vector<std::uint8_t> out;
  for (int i = 0; i < 100; ++i) {
    std::string text(rng() % 60, 'x');
    for (char& c : text) c = static_cast<char>(rng());
    std::uint8_t prefix[kLogMaxPrefix];
    const std::size_t n =
        log_record_prefix(static_cast<std::uint32_t>(rng()), rng(), text.size(), prefix);
    out.insert(out.end(), prefix, prefix + n);
    out.insert(out.end(), text.begin(), text.end());
  }
  return out;
}

// A corrupted copy: flipped bits, a cut start (any byte, not only 8-aligned) and a cut end.
std::vector<std::uint8_t> mutate(const std::vector<std::uint8_t>& base, std::mt19937_64& rng) {
  std::vector<std::uint8_t> v = base;
  const int flips = static_cast<int>(rng() % 6);
  for (int i = 0; i < flips && !v.empty(); ++i)
    v[rng() % v.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
  if (rng() % 2 == 0 && !v.empty())
    v.erase(v.begin(), v.begin() + static_cast<long>(rng() % v.size()));
  if (rng() % 2 == 0 && !v.empty()) v.resize(rng() % (v.size() + 1));
  return v;
}

class DecoderFuzz : public ::testing::TestWithParam<const char*> {};

TEST_P(DecoderFuzz, CorruptInputNeverCrashesOrOverreads) {
  const std::string name = GetParam();
  const std::vector<std::uint8_t> base = name == "synthetic"   ? synthetic_stream()
                                         : name == "calltrace" ? calltrace_stream()
                                                               : log_stream();
  auto decoder = make_decoder(name);
  ASSERT_NE(decoder, nullptr);
  std::mt19937_64 rng(42);
  int errors = 0;
  constexpr int kCases = 3000;
  for (int i = 0; i < kCases; ++i) {
    const std::vector<std::uint8_t> mutated = mutate(base, rng);
    // Exactly sized on the heap: one byte past the end is outside the allocation.
    auto bytes = std::make_unique<std::uint8_t[]>(mutated.size());
    std::copy(mutated.begin(), mutated.end(), bytes.get());
    const std::span<const std::uint8_t> window(bytes.get(), mutated.size());
    std::string text;
    const Expected<void> decoded = decoder->decode(window, "", text);
    if (!decoded) {
      ++errors;
      EXPECT_LE(decoded.error().offset, mutated.size()) << name << " case " << i;
      EXPECT_FALSE(decoded.error().message.empty());
    }
    // The structured decoders agree with the text decoder, and name the same offset.
    Expected<void> structured;
    if (name == "synthetic") {
      SyntheticWindow w;
      structured = decode_synthetic(window, w);
    } else if (name == "calltrace") {
      std::vector<CallEvent> events;
      structured = decode_calltrace(window, events);
    } else {
      std::vector<LogRecord> records;
      structured = decode_log(window, records);
    }
    EXPECT_EQ(structured.ok(), decoded.ok()) << name << " case " << i;
    EXPECT_EQ(corrupt_offset(structured), corrupt_offset(decoded)) << name << " case " << i;
  }
  // The mutations do produce corrupt windows (the test exercises the error paths).
  EXPECT_GT(errors, kCases / 10) << name;
}

INSTANTIATE_TEST_SUITE_P(AllFormats, DecoderFuzz,
                         ::testing::Values("synthetic", "calltrace", "log"));

}  // namespace
}  // namespace userperf::trace
