// `userperf script`'s text: one line per record, AUX flags spelled out, samples symbolized through
// MMAP2 records of files that exist (report::ProcessSymbols, as `userperf script` does), AUX sample
// bytes decoded through GROUP_DESC + PMU_MAPPINGS (or dumped in hex when the leader's PMU has no
// decoder), unknown types named by number.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "perfdata/reader.hpp"
#include "perfdata/record_names.hpp"
#include "report/process_symbols.hpp"
#include "report/script_printer.hpp"
#include "trace/synthetic_format.hpp"
#include "unit/perfdata/sample_file.hpp"
#include "unit/perfdata/test_files.hpp"

namespace userperf::report {
namespace {

using perfdata::GroupDesc;
using perfdata::PmuMapping;
using perfdata::Reader;
using perfdata::record_type_name;
using perfdata::Writer;

std::string script_of(const Reader& reader, bool symbolize = true) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  ProcessSymbols symbols;
  ScriptOptions options;
  if (symbolize) options.symbols = &symbols;
  const Expected<void> printed = print_script(reader, out, options);
  std::fclose(out);
  std::string result(text, size);
  std::free(text);
  EXPECT_TRUE(printed) << printed.error().message;
  return result;
}

std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    if (line.find(needle) != std::string::npos) out.push_back(line);
    pos = end + 1;
  }
  return out;
}

TEST(Script, PrintsEveryRecordOfTheSampleFile) {
  perfdata::testing::TempDir dir;
  const std::string path = dir.file("s.data");
  ASSERT_EQ(perfdata::testing::write_sample_file(path), "");
  auto reader = perfdata::testing::open_reader(path);
  ASSERT_TRUE(reader);
  const std::string text = script_of(*reader);

  ASSERT_EQ(lines_with(text, "PERF_RECORD_COMM: perfdata-test:").size(), 1u) << text;
  ASSERT_EQ(lines_with(text, "PERF_RECORD_MMAP2 ").size(), 1u);
  EXPECT_EQ(lines_with(text, "PERF_RECORD_ITRACE_START pid ").size(), 1u);
  EXPECT_EQ(lines_with(text, "PERF_RECORD_LOST_SAMPLES lost 3").size(), 1u);
  EXPECT_EQ(lines_with(text, "PERF_RECORD_FINISHED_ROUND").size(), 1u);
  const auto aux = lines_with(text, "PERF_RECORD_AUX ");
  ASSERT_EQ(aux.size(), 6u);
  EXPECT_NE(aux[0].find("flags 0x0 [none]"), std::string::npos) << aux[0];
  EXPECT_NE(aux[1].find("[TRUNCATED]"), std::string::npos) << aux[1];
  EXPECT_NE(aux[5].find("flags 0xf [TRUNCATED|OVERWRITE|PARTIAL|COLLISION]"), std::string::npos);
  EXPECT_NE(aux[0].find("2000: PERF_RECORD_AUX offset 0x3e80 size 0x200"), std::string::npos)
      << "time from the sample_id trailer: " << aux[0];

  const auto samples = lines_with(text, "PERF_RECORD_SAMPLE ");
  ASSERT_EQ(samples.size(), 7u);
  const std::string pid = std::to_string(getpid());
  EXPECT_NE(samples[0].find("cpu-clock " + pid + "/" + pid), std::string::npos) << samples[0];
  EXPECT_NE(samples[0].find("sample_file_marker+0x0 ("), std::string::npos) << samples[0];
  EXPECT_NE(samples[6].find("sample_file_marker+0x1"), std::string::npos) << samples[6];
  EXPECT_NE(samples[0].find("period 100000 aux 0"), std::string::npos);
  EXPECT_NE(samples[1].find("aux 64"), std::string::npos);
  // The leader is type 8, "calltrace" in PMU_MAPPINGS: its decoder reads the AUX bytes.
  EXPECT_EQ(lines_with(text, "    aux calltrace:").size(), 5u) << text;

  const std::string raw = script_of(*reader, false);
  EXPECT_EQ(raw.find("sample_file_marker"), std::string::npos);
}

// A synthetic-PMU group decodes cleanly; a leader whose PMU has no decoder gets a hex dump; an
// unknown record type is named by number.
TEST(Script, DecodesAuxThroughTheGroupLeaderAndDumpsWithoutADecoder) {
  perfdata::testing::TempDir dir;
  const std::string path = dir.file("d.data");
  auto writer = perfdata::testing::create_writer(path);
  perf_event_attr synthetic = perfdata::testing::leader_attr();
  synthetic.type = 12;
  perf_event_attr mystery = perfdata::testing::leader_attr();
  mystery.type = 13;
  const std::uint64_t ids[] = {1, 2, 3, 4};
  ASSERT_EQ(writer->add_attr(synthetic, std::span(ids).subspan(0, 1)), 0);
  ASSERT_EQ(writer->add_attr(perfdata::testing::sibling_attr(), std::span(ids).subspan(1, 1)), 1);
  ASSERT_EQ(writer->add_attr(mystery, std::span(ids).subspan(2, 1)), 2);
  ASSERT_EQ(writer->add_attr(perfdata::testing::sibling_attr(), std::span(ids).subspan(3, 1)), 3);
  std::vector<std::uint8_t> stream(128);
  trace::synthetic_fill(0x5eed, 4096, stream);
  ASSERT_TRUE(
      writer->append(perfdata::testing::sample_record({1, 1, 10, 2}, 0x1000, 1, true, stream)));
  ASSERT_TRUE(writer->append(perfdata::testing::sample_record({1, 1, 11, 4}, 0x1000, 1, true,
                                                              perfdata::testing::aux_bytes(96))));
  std::vector<std::uint8_t> odd = perfdata::testing::lost_samples_record({1, 1, 12, 4}, 1);
  ASSERT_TRUE(writer->append(odd));
  writer->features().pmu_mappings =
      std::vector<PmuMapping>{{12, "synthetic"}, {13, "mystery"}, {1, "software"}};
  writer->features().groups = std::vector<GroupDesc>{{"a", 0, 2}, {"b", 2, 2}};
  ASSERT_TRUE(writer->finish()) << writer->error().message;

  std::vector<std::uint8_t> bytes = perfdata::testing::read_file(path);
  auto reader = perfdata::testing::reader_from(bytes);
  ASSERT_TRUE(reader);
  // Retype the LOST_SAMPLES record (the last one) as type 30, unknown to every perf.
  const std::uint64_t last = reader->data_end() - odd.size();
  const std::uint32_t unknown = 30;
  std::memcpy(bytes.data() + last, &unknown, sizeof unknown);
  reader = perfdata::testing::reader_from(bytes);
  ASSERT_TRUE(reader);
  const std::string text = script_of(*reader);

  EXPECT_EQ(lines_with(text, "    aux synthetic:").size(), 1u) << text;
  EXPECT_TRUE(lines_with(text, "decode error").empty()) << text;
  const auto dump = lines_with(text, "    aux (mystery, no decoder): 01 08 0f 16");
  ASSERT_EQ(dump.size(), 1u) << text;
  EXPECT_NE(dump[0].find(" ..."), std::string::npos) << "96 bytes: the first 64 are shown";
  EXPECT_EQ(lines_with(text, "unknown type 30 size " + std::to_string(odd.size())).size(), 1u)
      << text;
}

// A record of a type no perf knows (0 here), too short for the sample_id trailer its attr
// promises: refused with the offset and the type by number, not a crash (a null name was appended
// to the message: ../shared/repro/script-type0-record.data).
TEST(Script, UnknownTypeWithABadTrailerIsRefusedByNumber) {
  perfdata::testing::TempDir dir;
  const std::string path = dir.file("t.data");
  auto writer = perfdata::testing::create_writer(path);
  ASSERT_TRUE(writer);
  const std::uint64_t id = 1;
  ASSERT_EQ(writer->add_attr(perfdata::testing::leader_attr(), std::span(&id, 1)), 0);
  ASSERT_TRUE(writer->append_finished_round());  // 8 bytes: retyped as 0 below
  ASSERT_TRUE(writer->finish()) << writer->error().message;
  std::vector<std::uint8_t> bytes = perfdata::testing::read_file(path);
  auto reader = perfdata::testing::reader_from(bytes);
  ASSERT_TRUE(reader);
  ASSERT_TRUE(reader->attrs()[0].attr.sample_id_all);
  const std::uint64_t last = reader->data_end() - sizeof(perf_event_header);
  const std::uint32_t zero = 0;
  std::memcpy(bytes.data() + last, &zero, sizeof zero);
  reader = perfdata::testing::reader_from(bytes);
  ASSERT_TRUE(reader);
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  const Expected<void> printed = print_script(*reader, out, ScriptOptions{});
  ASSERT_FALSE(printed);
  const Error& error = printed.error();
  std::fclose(out);
  std::free(text);
  EXPECT_NE(error.message.find("sample_id trailer of unknown type 0"), std::string::npos)
      << error.message;
  EXPECT_EQ(record_type_name(0), "unknown type 0");
  EXPECT_EQ(record_type_name(PERF_RECORD_MMAP2), "PERF_RECORD_MMAP2");
}

// The printer decodes what the reader only frames (sample bodies, sample_id trailers, AUX
// payloads): bit flips in the records of a good file, printed without symbols, are refused with an
// offset or printed, never a crash or an overread (ASan+UBSan in `make test`).
TEST(Script, BitFlippedRecordsNeverCrashThePrinter) {
  perfdata::testing::TempDir dir;
  const std::string path = dir.file("good.data");
  ASSERT_EQ(perfdata::testing::write_sample_file(path), "");
  const std::vector<std::uint8_t> good = perfdata::testing::read_file(path);
  const auto header = perfdata::testing::reader_from(good)->header();
  const char* seed = std::getenv("USERPERF_FUZZ_SEED");
  std::mt19937_64 rng(seed != nullptr ? std::strtoull(seed, nullptr, 0) : 20241126);
  int refused = 0;
  const int kCases = 2000;
  for (int i = 0; i < kCases; ++i) {
    std::vector<std::uint8_t> bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) {
      bytes[header.data.offset + rng() % header.data.size] ^= 1u << (rng() % 8);
    }
    auto reader = perfdata::testing::reader_from(std::move(bytes));
    ASSERT_TRUE(reader) << "only records were flipped";
    std::FILE* sink = std::fopen("/dev/null", "w");
    const Expected<void> printed = print_script(*reader, sink, ScriptOptions{});
    std::fclose(sink);
    if (!printed) {
      ++refused;
      EXPECT_TRUE(printed.error().has_offset()) << printed.error().message;
      EXPECT_NE(printed.error().message.find("offset"), std::string::npos)
          << printed.error().message;
    }
  }
  EXPECT_GT(refused, kCases / 10) << "the corruptions must be detected, not only survived";
}

TEST(Script, AuxFlagsText) {
  EXPECT_EQ(aux_flags_text(0), "none");
  EXPECT_EQ(aux_flags_text(PERF_AUX_FLAG_PARTIAL | PERF_AUX_FLAG_COLLISION), "PARTIAL|COLLISION");
  EXPECT_EQ(aux_flags_text(PERF_AUX_FLAG_TRUNCATED | 0x100 | 0x10000),
            "TRUNCATED|format=0x1|0x10000");
}

}  // namespace
}  // namespace userperf::report
