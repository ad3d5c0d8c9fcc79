// The log format: records round-trip, a window that starts mid-record finds the next record, and
// text lines escape what is not printable.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "trace/log_format.hpp"
#include "trace/words.hpp"
#include "unit/trace/corrupt_offset.hpp"

namespace userperf::trace {
namespace {

struct Encoded {
  std::vector<std::uint8_t> bytes;
  std::vector<LogRecord> records;
};

void append_record(Encoded& out, std::uint32_t tid, std::uint64_t time, const std::string& text) {
  std::uint8_t prefix[kLogMaxPrefix];
  const std::size_t n = log_record_prefix(tid, time, text.size(), prefix);
  LogRecord r;
  r.tid = tid;
  r.time = time;
  r.payload = text;
  r.offset = out.bytes.size();
  out.bytes.insert(out.bytes.end(), prefix, prefix + n);
  out.bytes.insert(out.bytes.end(), text.begin(), text.end());
  EXPECT_EQ(out.bytes.size() % 8, 0u);
  out.records.push_back(r);
}

// Records of random lengths and contents (including bytes that look like headers).
Encoded encode_run(std::uint32_t seed, int count) {
  std::mt19937_64 rng(seed);
  Encoded out;
  for (int i = 0; i < count; ++i) {
    std::string text(rng() % 90, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 4 == 0 ? 0xa7 : rng() % 256);
    append_record(out, static_cast<std::uint32_t>(1000 + rng() % 4), 5'000'000'000 + i * 1000u,
                  text);
  }
  return out;
}

TEST(LogFormat, RecordsRoundTrip) {
  const Encoded run = encode_run(1, 500);
  std::vector<LogRecord> records;
  std::uint64_t skipped = 99;
  const Expected<void> decoded = decode_log(run.bytes, records, &skipped);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(skipped, 0u);
  ASSERT_EQ(records.size(), run.records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].tid, run.records[i].tid);
    EXPECT_EQ(records[i].time, run.records[i].time);
    EXPECT_EQ(records[i].payload, run.records[i].payload);
    EXPECT_EQ(records[i].offset, run.records[i].offset);
  }
}

TEST(LogFormat, RecordSizes) {
  EXPECT_EQ(log_record_bytes(0), 16u);
  EXPECT_EQ(log_record_bytes(1), 24u);
  EXPECT_EQ(log_record_bytes(8), 24u);
  EXPECT_EQ(log_record_bytes(65535), 16u + 65536u);
}

TEST(LogFormat, ResynchronisesMidRecord) {
  const Encoded run = encode_run(2, 120);
  for (std::size_t start = 0; start < run.bytes.size(); start += 8) {
    const std::span<const std::uint8_t> window(run.bytes.data() + start, run.bytes.size() - start);
    std::vector<LogRecord> records;
    std::uint64_t skipped = 0;
    const Expected<void> decoded = decode_log(window, records, &skipped);
    ASSERT_TRUE(decoded) << start << ": " << decoded.error().message;
    std::size_t first = 0;
    while (first < run.records.size() && run.records[first].offset < start) ++first;
    ASSERT_EQ(records.size(), run.records.size() - first) << "start " << start;
    if (!records.empty()) {
      EXPECT_EQ(skipped, run.records[first].offset - start);
      EXPECT_EQ(records.front().payload, run.records[first].payload);
    }
  }
}

TEST(LogFormat, PaddingAndCorruption) {
  Encoded run = encode_run(3, 10);
  auto padded = run.bytes;
  padded.insert(padded.begin(), 24, 0);  // an area not yet written
  padded.insert(padded.end(), 32, 0);    // a sample's zero padding
  std::vector<LogRecord> records;
  ASSERT_TRUE(decode_log(padded, records));
  EXPECT_EQ(records.size(), 10u);

  // A header in the middle with a wrong check byte: the records before it stay.
  auto corrupt = run.bytes;
  const std::size_t at = run.records[6].offset;
  corrupt[at + 6] ^= 0x01;
  records.clear();
  EXPECT_EQ(corrupt_offset(decode_log(corrupt, records)), at);
  EXPECT_EQ(records.size(), 6u);

  // Data after zero padding.
  auto trailing = run.bytes;
  trailing.insert(trailing.end(), 16, 0);
  trailing.insert(trailing.end(), 8, 0x11);
  records.clear();
  EXPECT_EQ(corrupt_offset(decode_log(trailing, records)), run.bytes.size() + 16);
}

TEST(LogFormat, TextEscapesNonPrintables) {
  Encoded run;
  append_record(run, 4242, 12'000'000'345, std::string("hi\tthere\n\\ \x01\xff", 13));
  auto decoder = make_decoder("log");
  ASSERT_NE(decoder, nullptr);
  std::string out;
  ASSERT_TRUE(decoder->decode(run.bytes, "> ", out));
  EXPECT_EQ(out, "> 12.000000345 tid 4242: hi\\tthere\\n\\\\ \\x01\\xff\n");
}

}  // namespace
}  // namespace userperf::trace
