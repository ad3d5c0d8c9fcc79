// The reader never trusts the file: each corruption of a header field, an attr, an ids section,
// the feature index, a feature body or a record gives an error naming an offset; thousands of
// random truncations and bit flips (run under ASan+UBSan by `make test`) never crash or overread.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "perfdata/reader.hpp"
#include "unit/perfdata/sample_file.hpp"
#include "unit/perfdata/test_files.hpp"

namespace userperf::perfdata {
namespace {

class PerfdataCorrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = dir_.file("good.data");
    ASSERT_EQ(testing::write_sample_file(path), "");
    good_ = testing::read_file(path);
    auto reader = testing::reader_from(good_);
    ASSERT_TRUE(reader);
    header_ = reader->header();
    ids_at_ = reader->attrs()[0].offset + reader->attrs()[0].size;
    feature_index_ = header_.data.offset + header_.data.size;
    first_body_ = reader->feature_sections().front().section.offset;
  }

  template <class T>
  std::vector<std::uint8_t> with(std::uint64_t offset, T value) const {
    std::vector<std::uint8_t> bytes = good_;
    std::memcpy(bytes.data() + offset, &value, sizeof value);
    return bytes;
  }

  // Opens and, if that succeeds, walks every record. Returns the first error.
  static Expected<void> consume(std::vector<std::uint8_t> bytes) {
    auto reader = Reader::from_bytes(std::move(bytes));
    if (!reader) return reader.error();
    RecordCursor cursor(**reader);
    RecordView record;
    RecordCursor::Next next;
    while ((next = cursor.next(record)) == RecordCursor::Next::kRecord) {
    }
    if (next == RecordCursor::Next::kError) return cursor.error();
    return {};
  }

  void expect_error(const std::vector<std::uint8_t>& bytes, const std::string& text,
                    std::uint64_t offset) {
    const Expected<void> consumed = consume(bytes);
    ASSERT_FALSE(consumed) << text;
    const Error& error = consumed.error();
    EXPECT_EQ(error.code, EINVAL) << text;
    EXPECT_EQ(error.offset, offset) << error.message;
    EXPECT_NE(error.message.find(text), std::string::npos) << error.message;
    EXPECT_NE(error.message.find("at offset " + std::to_string(offset)), std::string::npos)
        << error.message;
  }

  testing::TempDir dir_;
  std::vector<std::uint8_t> good_;
  FileHeader header_;
  std::uint64_t ids_at_ = 0;
  std::uint64_t feature_index_ = 0;
  std::uint64_t first_body_ = 0;
};

TEST_F(PerfdataCorrupt, GoodFileReadsCleanly) {
  const Expected<void> consumed = consume(good_);
  EXPECT_TRUE(consumed) << consumed.error().message;
}

TEST_F(PerfdataCorrupt, HeaderFields) {
  expect_error(std::vector<std::uint8_t>(good_.begin(), good_.begin() + 10), "has no header", 0);
  expect_error(with<std::uint64_t>(0, 0x1234), "not a perf.data file", 0);
  expect_error(with<std::uint64_t>(0, __builtin_bswap64(kMagic)), "other byte order", 0);
  expect_error(with<std::uint64_t>(8, 16), "pipe-mode", 8);
  expect_error(with<std::uint64_t>(8, 4096), "header size 4096", 8);
  expect_error(std::vector<std::uint8_t>(good_.begin(), good_.begin() + 60), "inside the 104", 60);
  expect_error(with<std::uint64_t>(16, 0), "attr_size 0", 16);
  expect_error(with<std::uint64_t>(16, 136), "does not match attr_size", 104 + 4);
  expect_error(with<std::uint64_t>(24, ~0ULL), "attrs section", 24);
  expect_error(with<std::uint64_t>(32, good_.size()), "attrs section", 24);
  expect_error(with<std::uint64_t>(40, good_.size() - 8), "data section", 40);
  expect_error(with<std::uint64_t>(48, ~0ULL - 100), "data section", 40);
}

TEST_F(PerfdataCorrupt, AttrsAndIds) {
  expect_error(with<std::uint32_t>(104 + 4, 200), "attr.size 200", 104 + 4);
  expect_error(with<std::uint64_t>(ids_at_, good_.size()), "ids section", ids_at_);
  expect_error(with<std::uint64_t>(ids_at_ + 8, 12), "ids section", ids_at_);
  // Both attrs listing id 1001.
  const std::uint64_t second_ids = header_.attrs.offset + header_.attrs.size + 8;
  expect_error(with<std::uint64_t>(second_ids, testing::kLeaderId), "listed under attrs 0 and 1",
               second_ids);
  // The sibling without PERF_SAMPLE_ID: perf cannot map records to attrs.
  const std::uint64_t sibling_type = 104 + sizeof(perf_event_attr) + 16 + 24;
  expect_error(with<std::uint64_t>(sibling_type, PERF_SAMPLE_IP), "PERF_SAMPLE_ID",
               104 + sizeof(perf_event_attr) + 16);
}

TEST_F(PerfdataCorrupt, FeatureIndexAndBodies) {
  expect_error(with<std::uint64_t>(feature_index_, good_.size() - 2), "runs past the file end",
               feature_index_);
  expect_error(with<std::uint64_t>(feature_index_ + 8, good_.size()), "runs past the file end",
               feature_index_);
  expect_error(with<std::uint32_t>(first_body_, 1u << 30), "truncated body", first_body_ + 4);
  std::vector<std::uint8_t> bytes = good_;
  bytes.resize(feature_index_ + 8);
  expect_error(bytes, "runs past the file end", feature_index_);
  // Every feature bit set: the index has only 8 entries.
  std::vector<std::uint8_t> all = good_;
  std::memset(all.data() + offsetof(FileHeader, adds_features), 0xff, 32);
  EXPECT_FALSE(consume(all)) << "every feature bit set: the index has only 8 entries";
}

TEST_F(PerfdataCorrupt, Records) {
  const std::uint64_t first = header_.data.offset;
  expect_error(with<std::uint16_t>(first + 6, 0), "has size 0", first);
  expect_error(with<std::uint16_t>(first + 6, 12), "has size 12", first);
  expect_error(with<std::uint16_t>(first + 6, 0xfff8), "runs past the data end", first);
  // A COMM whose body is too short for pid and tid.
  std::vector<std::uint8_t> shortened = with<std::uint16_t>(first + 6, 8);
  EXPECT_FALSE(consume(shortened)) << "the rest no longer parses as records";
}

TEST_F(PerfdataCorrupt, RandomTruncationsAndBitFlipsNeverCrash) {
  // A fixed seed keeps failures reproducible; USERPERF_FUZZ_SEED explores others.
  const char* seed = std::getenv("USERPERF_FUZZ_SEED");
  std::mt19937_64 rng(seed != nullptr ? std::strtoull(seed, nullptr, 0) : 20240611);
  int errors = 0;
  const int kCases = 4000;
  for (int i = 0; i < kCases; ++i) {
    std::vector<std::uint8_t> bytes = good_;
    switch (rng() % 4) {
      case 0:
        bytes.resize(rng() % bytes.size());
        break;
      case 1: {  // bit flips anywhere
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] ^= 1u << (rng() % 8);
        break;
      }
      case 2: {  // bit flips in the header, attrs and ids (sizes and offsets)
        const std::uint64_t limit = header_.data.offset;
        bytes[rng() % limit] ^= 1u << (rng() % 8);
        break;
      }
      default: {  // a random u64 or u16 over an aligned size/offset field
        const std::uint64_t at = (rng() % (bytes.size() / 8)) * 8;
        const std::uint64_t value = rng() % 3 == 0 ? rng() : rng() % (bytes.size() * 2);
        if (rng() % 2 == 0) {
          std::memcpy(bytes.data() + at, &value, 8);
        } else {
          const auto small = static_cast<std::uint16_t>(value);
          std::memcpy(bytes.data() + at + 6, &small, 2);
        }
        break;
      }
    }
    const Expected<void> consumed = consume(std::move(bytes));
    if (!consumed) {
      ++errors;
      EXPECT_TRUE(consumed.error().has_offset()) << consumed.error().message;
      EXPECT_NE(consumed.error().message.find("offset"), std::string::npos)
          << consumed.error().message;
    }
  }
  EXPECT_GT(errors, kCases / 10) << "the corruptions must be detected, not only survived";
}

}  // namespace
}  // namespace userperf::perfdata
