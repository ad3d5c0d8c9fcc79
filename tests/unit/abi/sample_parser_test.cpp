// Unit tests for the record decoder (abi/sample_parser.hpp) on crafted records: the layouts the
// kernel writes (two of them copied byte for byte from kernel-oracle.md), every sample_type bit,
// and truncated or corrupt records, which must give an error and never a read past the record.
#include "abi/sample_parser.hpp"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace userperf::abi {
namespace {

// Builds a record word by word; header.size is set from the length unless overridden.
class Builder {
 public:
  explicit Builder(std::uint32_t type = PERF_RECORD_SAMPLE,
                   std::uint16_t misc = PERF_RECORD_MISC_USER) {
    const perf_event_header h{type, misc, 0};
    append(&h, sizeof h);
  }
  Builder& u64(std::uint64_t v) { return append(&v, sizeof v); }
  Builder& u32(std::uint32_t v) { return append(&v, sizeof v); }
  Builder& fill(std::size_t n, std::uint8_t byte) {
    bytes_.insert(bytes_.end(), n, byte);
    return *this;
  }
  std::vector<std::uint8_t> build(int size_override = -1) const {
    std::vector<std::uint8_t> out = bytes_;
    const auto size = static_cast<std::uint16_t>(size_override >= 0 ? size_override
                                                                    : static_cast<int>(out.size()));
    std::memcpy(out.data() + offsetof(perf_event_header, size), &size, sizeof size);
    return out;
  }

 private:
  Builder& append(const void* p, std::size_t n) {
    const std::size_t at = bytes_.size();
    bytes_.resize(at + n);
    std::memcpy(bytes_.data() + at, p, n);
    return *this;
  }
  std::vector<std::uint8_t> bytes_;
};

// "0000: 09 00 ..." lines as in the oracle's dumps; the address column is skipped.
std::vector<std::uint8_t> from_hex(const char* dump) {
  std::vector<std::uint8_t> out;
  std::istringstream lines(dump);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line.substr(line.find(':') + 1));
    std::string w;
    while (words >> w) out.push_back(static_cast<std::uint8_t>(std::stoul(w, nullptr, 16)));
  }
  return out;
}

std::vector<std::string> names(const std::vector<SampleField>& fields) {
  std::vector<std::string> out;
  for (const SampleField& f : fields) out.emplace_back(f.name);
  return out;
}

// Each field inside the record, in order, without gaps or overlaps.
void expect_contiguous(const ParsedSample& s) {
  std::uint32_t pos = 0;
  for (const SampleField& f : s.fields) {
    EXPECT_EQ(f.offset, pos) << f.name;
    pos = f.offset + f.size;
  }
  EXPECT_EQ(pos, s.header.size);
}

// The 320-byte cpu-clock sample of kernel-oracle.md §1 (the 64 stack bytes are partly elided there
// and zero here).
constexpr const char* kOracleSample = R"(
0000: 09 00 00 00 02 00 40 01  e6 02 00 00 00 00 00 00
0010: e7 89 96 05 51 56 00 00  c0 2e 00 00 c0 2e 00 00
0020: 9f 7f b5 b2 0c 01 00 00  00 00 00 00 00 00 00 00
0030: e6 02 00 00 00 00 00 00  e6 02 00 00 00 00 00 00
0040: 01 00 00 00 00 00 00 00  40 42 0f 00 00 00 00 00
0050: 02 00 00 00 00 00 00 00  e8 10 10 00 00 00 00 00
0060: e8 10 10 00 00 00 00 00  32 d6 0f 00 00 00 00 00
0070: e6 02 00 00 00 00 00 00  00 00 00 00 00 00 00 00
0080: e2 11 10 00 00 00 00 00  e7 02 00 00 00 00 00 00
0090: 00 00 00 00 00 00 00 00  05 00 00 00 00 00 00 00
00a0: 00 fe ff ff ff ff ff ff  e7 89 96 05 51 56 00 00
00b0: 80 8c 96 05 51 56 00 00  b4 b2 96 05 51 56 00 00
00c0: 4a 82 04 06 3f 7f 00 00  02 00 00 00 00 00 00 00
00d0: 31 f8 01 00 00 00 00 00  c0 d3 93 92 fc 7f 00 00
00e0: a0 d3 93 92 fc 7f 00 00  e7 89 96 05 51 56 00 00
00f0: 40 00 00 00 00 00 00 00  82 04 00 00 00 00 00 00
0100: 00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
0110: 00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
0120: 00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
0130: 00 00 00 00 00 00 00 00  40 00 00 00 00 00 00 00
)";

constexpr std::uint64_t kOracleRegs = (1ULL << 0) | (1ULL << 6) | (1ULL << 7) | (1ULL << 8);

SampleFormat oracle_format() {
  SampleFormat f;
  f.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                  PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
                  PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN |
                  PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  f.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID |
                  PERF_FORMAT_GROUP | PERF_FORMAT_LOST;
  f.sample_regs_user = kOracleRegs;
  return f;
}

TEST(SampleParser, OracleFullSample) {
  const std::vector<std::uint8_t> rec = from_hex(kOracleSample);
  ASSERT_EQ(rec.size(), 320u);
  ParsedSample s;
  const ParseStatus st = parse_sample(rec, oracle_format(), s);
  ASSERT_TRUE(st.ok()) << to_string(st.error) << " at " << st.offset;
  expect_contiguous(s);

  const std::vector<std::string> expected = {"header",
                                             "identifier",
                                             "ip",
                                             "pid",
                                             "tid",
                                             "time",
                                             "addr",
                                             "id",
                                             "stream_id",
                                             "cpu",
                                             "cpu_reserved",
                                             "period",
                                             "read.nr",
                                             "read.time_enabled",
                                             "read.time_running",
                                             "read.value",
                                             "read.id",
                                             "read.lost",
                                             "read.value",
                                             "read.id",
                                             "read.lost",
                                             "callchain.nr",
                                             "callchain.ips",
                                             "regs_user.abi",
                                             "regs_user.regs",
                                             "stack_user.size",
                                             "stack_user.data",
                                             "stack_user.dyn_size"};
  EXPECT_EQ(names(s.fields), expected);

  EXPECT_EQ(s.header.misc, PERF_RECORD_MISC_USER);
  EXPECT_EQ(s.identifier, 742u);
  EXPECT_EQ(s.ip, 0x5651059689e7u);
  EXPECT_EQ(s.pid, 0x2ec0u);
  EXPECT_EQ(s.tid, 0x2ec0u);
  EXPECT_EQ(s.time, 0x10cb2b57f9fu);
  EXPECT_EQ(s.addr, 0u);
  EXPECT_EQ(s.id, 742u);
  EXPECT_EQ(s.stream_id, 742u);
  EXPECT_EQ(s.cpu, 1u);
  EXPECT_EQ(s.period, 1000000u);
  ASSERT_EQ(s.read.nr, 2u);
  EXPECT_EQ(s.read.time_enabled, 0x1010e8u);
  EXPECT_EQ(s.read.time_running, 0x1010e8u);
  ASSERT_EQ(s.read.entries.size(), 2u);
  EXPECT_EQ(s.read.entries[0].id, 742u);
  EXPECT_EQ(s.read.entries[1].id, 743u);
  EXPECT_EQ(s.read.entries[1].value, 0x1011e2u);
  ASSERT_EQ(s.callchain.size(), 5u);
  EXPECT_EQ(s.callchain[0], static_cast<std::uint64_t>(PERF_CONTEXT_USER));
  EXPECT_EQ(s.callchain[1], s.ip);
  EXPECT_EQ(s.regs_user.abi, static_cast<std::uint64_t>(PERF_SAMPLE_REGS_ABI_64));
  ASSERT_EQ(s.regs_user.values.size(), 4u);
  EXPECT_EQ(s.regs_user.values[0], 0x1f831u);  // AX
  EXPECT_EQ(s.regs_user.values[3], s.ip);      // IP, the highest mask bit
  EXPECT_EQ(s.stack_size, 64u);
  EXPECT_EQ(s.stack.offset, 0xf8u);
  EXPECT_EQ(s.stack.size, 64u);
  EXPECT_EQ(s.stack_dyn_size, 64u);
  EXPECT_EQ(rec[s.stack.offset], 0x82);

  const SampleField* regs = s.field("regs_user.regs");
  ASSERT_NE(regs, nullptr);
  EXPECT_EQ(regs->offset, 0xd0u);
  EXPECT_EQ(regs->size, 32u);
  const SampleField* second_lost = s.field("read.lost", 1);
  ASSERT_NE(second_lost, nullptr);
  EXPECT_EQ(second_lost->offset, 0x90u);
}

// The BPF output record of kernel-oracle.md §7: RAW with 2 stale pad bytes.
TEST(SampleParser, OracleBpfOutputRaw) {
  const std::vector<std::uint8_t> rec = from_hex(R"(
0000: 09 00 00 00 02 00 50 00  76 02 00 00 00 00 00 00
0010: 69 2d 00 00 69 2d 00 00  f5 55 5a 1c 07 01 00 00
0020: 00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
0030: 1c 00 00 00 40 42 0f 00  00 00 00 00 00 00 00 00
0040: 00 00 00 00 46 23 a2 ad  c9 55 00 00 55 55 aa aa
)");
  SampleFormat f;
  f.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                  PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW;
  ParsedSample s;
  ASSERT_TRUE(parse_sample(rec, f, s).ok());
  expect_contiguous(s);
  EXPECT_EQ(s.identifier, 0x276u);
  EXPECT_EQ(s.period, 0u);
  EXPECT_EQ(s.raw_size, 28u);
  EXPECT_EQ(s.raw.offset, 52u);
  EXPECT_EQ(s.raw.size, 28u);
  EXPECT_EQ(s.field("raw.size")->size, 4u);
}

struct OneBit {
  std::uint64_t bit;
  std::vector<std::string> fields;  // after the header
  std::uint64_t second_word;        // the word at offset 8..16
};

// Every bit alone in a 16-byte record: what the kernel writes for a cpu-clock sample carrying only
// that bit (kernel-oracle.md §1, "single-bit records").
TEST(SampleParser, EveryBitAloneIsSixteenBytes) {
  const std::vector<OneBit> bits = {
      {PERF_SAMPLE_IP, {"ip"}, 0x401000},
      {PERF_SAMPLE_TID, {"pid", "tid"}, 0x0000000700000007},
      {PERF_SAMPLE_TIME, {"time"}, 123},
      {PERF_SAMPLE_ADDR, {"addr"}, 0},
      {PERF_SAMPLE_READ, {"read.value"}, 99},
      {PERF_SAMPLE_CALLCHAIN, {"callchain.nr"}, 0},
      {PERF_SAMPLE_ID, {"id"}, 5},
      {PERF_SAMPLE_CPU, {"cpu", "cpu_reserved"}, 1},
      {PERF_SAMPLE_PERIOD, {"period"}, 1000000},
      {PERF_SAMPLE_STREAM_ID, {"stream_id"}, 5},
      {PERF_SAMPLE_RAW, {"raw.size", "raw.data"}, 4},
      {PERF_SAMPLE_BRANCH_STACK, {"branch_stack.nr"}, 0},
      {PERF_SAMPLE_REGS_USER, {"regs_user.abi"}, 0},
      {PERF_SAMPLE_STACK_USER, {"stack_user.size"}, 0},
      {PERF_SAMPLE_WEIGHT, {"weight"}, 0},
      {PERF_SAMPLE_DATA_SRC, {"data_src"}, 0x1e05080021},
      {PERF_SAMPLE_IDENTIFIER, {"identifier"}, 5},
      {PERF_SAMPLE_TRANSACTION, {"transaction"}, 0},
      {PERF_SAMPLE_REGS_INTR, {"regs_intr.abi"}, 0},
      {PERF_SAMPLE_PHYS_ADDR, {"phys_addr"}, 0},
      {PERF_SAMPLE_AUX, {"aux.size"}, 0},
      {PERF_SAMPLE_CGROUP, {"cgroup"}, 1},
      {PERF_SAMPLE_DATA_PAGE_SIZE, {"data_page_size"}, 0},
      {PERF_SAMPLE_CODE_PAGE_SIZE, {"code_page_size"}, 4096},
      {PERF_SAMPLE_WEIGHT_STRUCT, {"weight_struct"}, 0x0003000200000001},
  };
  ASSERT_EQ(bits.size(), 25u);
  for (const OneBit& b : bits) {
    SCOPED_TRACE(b.fields.front());
    const std::vector<std::uint8_t> rec = Builder().u64(b.second_word).build();
    SampleFormat f;
    f.sample_type = b.bit;
    f.sample_regs_user = kOracleRegs;
    f.sample_regs_intr = kOracleRegs;
    ParsedSample s;
    const ParseStatus st = parse_sample(rec, f, s);
    ASSERT_TRUE(st.ok()) << to_string(st.error);
    std::vector<std::string> expected = {"header"};
    expected.insert(expected.end(), b.fields.begin(), b.fields.end());
    EXPECT_EQ(names(s.fields), expected);
    expect_contiguous(s);
  }
}

TEST(SampleParser, DecodesSingleBitValues) {
  SampleFormat f;
  ParsedSample s;
  f.sample_type = PERF_SAMPLE_TID;
  ASSERT_TRUE(parse_sample(Builder().u32(10).u32(11).build(), f, s).ok());
  EXPECT_EQ(s.pid, 10u);
  EXPECT_EQ(s.tid, 11u);
  f.sample_type = PERF_SAMPLE_CPU;
  ASSERT_TRUE(parse_sample(Builder().u32(1).u32(0).build(), f, s).ok());
  EXPECT_EQ(s.cpu, 1u);
  EXPECT_EQ(s.cpu_reserved, 0u);
  f.sample_type = PERF_SAMPLE_RAW;
  ASSERT_TRUE(parse_sample(Builder().u32(4).u32(0).build(), f, s).ok());
  EXPECT_EQ(s.raw_size, 4u);
  EXPECT_EQ(s.raw.offset, 12u);
  f.sample_type = PERF_SAMPLE_WEIGHT_STRUCT;
  ASSERT_TRUE(parse_sample(Builder().u32(7).u32(0x00090008).build(), f, s).ok());
  EXPECT_EQ(s.weight_struct.var1, 7u);
  EXPECT_EQ(s.weight_struct.var2, 8u);
  EXPECT_EQ(s.weight_struct.var3, 9u);
  f.sample_type = PERF_SAMPLE_AUX;
  ASSERT_TRUE(parse_sample(Builder().u64(8).u64(0xabcd).build(), f, s).ok());
  EXPECT_EQ(s.aux_size, 8u);
  EXPECT_EQ(s.aux.offset, 16u);
  EXPECT_EQ(s.aux.size, 8u);
}

// All bits at once: the fields come in perf_output_sample's order, not in bit order.
TEST(SampleParser, KernelOrderWithEveryBit) {
  SampleFormat f;
  f.sample_type = (1ULL << 25) - 1;
  f.sample_type &=
      ~std::uint64_t{PERF_SAMPLE_WEIGHT};  // WEIGHT and WEIGHT_STRUCT exclude each other
  f.read_format = 0;
  f.sample_regs_user = 1;
  f.sample_regs_intr = 3;
  Builder b;
  b.u64(1)                     // identifier
      .u64(2)                  // ip
      .u32(3)                  // pid
      .u32(4)                  // tid
      .u64(5)                  // time
      .u64(6)                  // addr
      .u64(7)                  // id
      .u64(8)                  // stream_id
      .u32(9)                  // cpu
      .u32(0)                  // cpu_reserved
      .u64(10)                 // period
      .u64(11)                 // read.value
      .u64(1)                  // callchain.nr
      .u64(PERF_CONTEXT_USER)  // callchain.ips
      .u32(4)                  // raw.size
      .u32(0)                  // raw.data
      .u64(1)                  // branch_stack.nr
      .fill(24, 0xbb)          // branch_stack.entries
      .u64(2)                  // regs_user.abi
      .u64(12)                 // regs_user.regs
      .u64(8)                  // stack_user.size
      .fill(8, 0x5a)           // stack_user.data
      .u64(8)                  // stack_user.dyn_size
      .u64(13)                 // weight_struct
      .u64(14)                 // data_src
      .u64(15)                 // transaction
      .u64(2)                  // regs_intr.abi
      .u64(16)                 // regs_intr.regs
      .u64(17)
      .u64(18)  // phys_addr
      .u64(19)  // cgroup
      .u64(20)  // data_page_size
      .u64(21)  // code_page_size
      .u64(0);  // aux.size
  ParsedSample s;
  const ParseStatus st = parse_sample(b.build(), f, s);
  ASSERT_TRUE(st.ok()) << to_string(st.error) << " at " << st.offset;
  expect_contiguous(s);
  const std::vector<std::string> expected = {"header",
                                             "identifier",
                                             "ip",
                                             "pid",
                                             "tid",
                                             "time",
                                             "addr",
                                             "id",
                                             "stream_id",
                                             "cpu",
                                             "cpu_reserved",
                                             "period",
                                             "read.value",
                                             "callchain.nr",
                                             "callchain.ips",
                                             "raw.size",
                                             "raw.data",
                                             "branch_stack.nr",
                                             "branch_stack.entries",
                                             "regs_user.abi",
                                             "regs_user.regs",
                                             "stack_user.size",
                                             "stack_user.data",
                                             "stack_user.dyn_size",
                                             "weight_struct",
                                             "data_src",
                                             "transaction",
                                             "regs_intr.abi",
                                             "regs_intr.regs",
                                             "phys_addr",
                                             "cgroup",
                                             "data_page_size",
                                             "code_page_size",
                                             "aux.size"};
  EXPECT_EQ(names(s.fields), expected);
  EXPECT_EQ(s.stream_id, 8u);
  EXPECT_EQ(s.weight, 13u);
  ASSERT_EQ(s.regs_intr.values.size(), 2u);
  EXPECT_EQ(s.regs_intr.values[1], 17u);
  EXPECT_EQ(s.code_page_size, 21u);
}

TEST(SampleParser, ReadFormatWithoutGroup) {
  SampleFormat f;
  f.sample_type = PERF_SAMPLE_READ;
  f.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID |
                  PERF_FORMAT_LOST;
  ParsedSample s;
  ASSERT_TRUE(parse_sample(Builder().u64(100).u64(200).u64(150).u64(7).u64(3).build(), f, s).ok());
  EXPECT_EQ(names(s.fields),
            (std::vector<std::string>{"header", "read.value", "read.time_enabled",
                                      "read.time_running", "read.id", "read.lost"}));
  EXPECT_EQ(s.read.nr, 1u);
  ASSERT_EQ(s.read.entries.size(), 1u);
  EXPECT_EQ(s.read.entries[0].value, 100u);
  EXPECT_EQ(s.read.time_enabled, 200u);
  EXPECT_EQ(s.read.time_running, 150u);
  EXPECT_EQ(s.read.entries[0].id, 7u);
  EXPECT_EQ(s.read.entries[0].lost, 3u);
}

TEST(SampleParser, ReadFormatGroupOfThree) {
  SampleFormat f;
  f.sample_type = PERF_SAMPLE_READ;
  f.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
  Builder b;
  b.u64(3);
  for (std::uint64_t i = 0; i < 3; ++i) b.u64(10 * i).u64(100 + i);
  ParsedSample s;
  ASSERT_TRUE(parse_sample(b.build(), f, s).ok());
  ASSERT_EQ(s.read.entries.size(), 3u);
  EXPECT_EQ(s.read.entries[2].value, 20u);
  EXPECT_EQ(s.read.entries[2].id, 102u);
  const SampleField* id2 = s.field("read.id", 2);
  ASSERT_NE(id2, nullptr);
  EXPECT_EQ(id2->offset, 8u + 8 + 2 * 16 + 8);
}

TEST(SampleParser, RegsFollowTheMaskAndAbi) {
  SampleFormat f;
  f.sample_type = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_REGS_INTR;
  f.sample_regs_user = (1ULL << 3) | (1ULL << 40);
  f.sample_regs_intr = 1ULL << 8;
  ParsedSample s;
  // 32-bit abi with two registers, then no interrupt registers (abi NONE).
  ASSERT_TRUE(parse_sample(Builder().u64(1).u64(0x33).u64(0x40).u64(0).build(), f, s).ok());
  EXPECT_EQ(s.regs_user.abi, 1u);
  EXPECT_EQ(s.regs_user.mask, f.sample_regs_user);
  EXPECT_EQ(s.regs_user.values, (std::vector<std::uint64_t>{0x33, 0x40}));
  EXPECT_EQ(s.regs_intr.abi, 0u);
  EXPECT_TRUE(s.regs_intr.values.empty());
  EXPECT_EQ(s.field("regs_intr.regs"), nullptr);
}

// One ParsedSample reused for record after record (as the recorder and the report parse) reads
// each as a fresh one would: nothing of the record before is left in its vectors or fields, and
// the vectors keep their storage.
TEST(SampleParser, ReusedSampleReadsEachRecordAsAFreshOneWould) {
  const std::vector<std::uint8_t> full = from_hex(kOracleSample);
  const SampleFormat full_format = oracle_format();
  SampleFormat small_format;
  small_format.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_READ | PERF_SAMPLE_REGS_USER;
  small_format.read_format = 0;
  small_format.sample_regs_user = 1ULL << 8;
  const std::vector<std::uint8_t> small = Builder().u64(0x1234).u64(9).u64(0).build();
  ParsedSample reused;
  for (int round = 0; round < 2; ++round) {
    for (const auto& [record, format] : {std::pair{&full, &full_format}, {&small, &small_format}}) {
      ParsedSample fresh;
      ASSERT_TRUE(parse_sample(*record, *format, fresh).ok());
      ASSERT_TRUE(parse_sample(*record, *format, reused).ok());
      EXPECT_EQ(names(reused.fields), names(fresh.fields));
      EXPECT_EQ(reused.callchain, fresh.callchain);
      EXPECT_EQ(reused.regs_user.values, fresh.regs_user.values);
      EXPECT_EQ(reused.regs_user.abi, fresh.regs_user.abi);
      ASSERT_EQ(reused.read.entries.size(), fresh.read.entries.size());
      for (std::size_t i = 0; i < fresh.read.entries.size(); ++i) {
        EXPECT_EQ(reused.read.entries[i].value, fresh.read.entries[i].value);
        EXPECT_EQ(reused.read.entries[i].id, fresh.read.entries[i].id);
      }
      EXPECT_EQ(reused.ip, fresh.ip);
      EXPECT_EQ(reused.time, fresh.time);
      EXPECT_EQ(reused.stack.size, fresh.stack.size);
    }
  }
  // After the small record the vectors hold its fields only but keep the full record's storage.
  ParsedSample full_fresh;
  ASSERT_TRUE(parse_sample(full, full_format, full_fresh).ok());
  EXPECT_TRUE(reused.callchain.empty());
  EXPECT_GE(reused.callchain.capacity(), full_fresh.callchain.size());
  EXPECT_GE(reused.fields.capacity(), full_fresh.fields.size());
}

TEST(SampleParser, StackUserSizes) {
  SampleFormat f;
  f.sample_type = PERF_SAMPLE_STACK_USER | PERF_SAMPLE_CODE_PAGE_SIZE;
  ParsedSample s;
  // size 0: no bytes and no dyn_size.
  ASSERT_TRUE(parse_sample(Builder().u64(0).u64(4096).build(), f, s).ok());
  EXPECT_EQ(s.stack_size, 0u);
  EXPECT_EQ(s.code_page_size, 4096u);
  EXPECT_EQ(s.field("stack_user.dyn_size"), nullptr);
  // dyn_size below size: the rest of the dump is skipped garbage, still part of the record.
  ASSERT_TRUE(parse_sample(Builder().u64(32).fill(32, 1).u64(16).u64(4096).build(), f, s).ok());
  EXPECT_EQ(s.stack_size, 32u);
  EXPECT_EQ(s.stack.offset, 16u);
  EXPECT_EQ(s.stack_dyn_size, 16u);
  // dyn_size above size is impossible.
  const ParseStatus st =
      parse_sample(Builder().u64(32).fill(32, 1).u64(40).u64(4096).build(), f, s);
  EXPECT_EQ(st.error, ParseError::kBadValue);
  EXPECT_EQ(st.offset, 8u + 8 + 32);
}

TEST(SampleParser, BranchStackWithHwIndexAndCounters) {
  SampleFormat f;
  f.sample_type = PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_DATA_SRC;
  f.branch_sample_type =
      PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX | kBranchSampleCounters;
  ParsedSample s;
  const auto rec = Builder().u64(2).u64(77).fill(48, 0xee).u64(1).u64(2).u64(1000).build();
  ASSERT_TRUE(parse_sample(rec, f, s).ok());
  EXPECT_EQ(s.branch_stack.nr, 2u);
  EXPECT_TRUE(s.branch_stack.has_hw_idx);
  EXPECT_EQ(s.branch_stack.hw_idx, 77u);
  EXPECT_EQ(s.branch_stack.entries.offset, 24u);
  EXPECT_EQ(s.branch_stack.entries.size, 48u);
  EXPECT_EQ(s.branch_stack.counters.offset, 72u);
  EXPECT_EQ(s.branch_stack.counters.size, 16u);
  EXPECT_EQ(s.data_src, 1000u);
}

// nr == 0 with HW_INDEX: no branch stack from the PMU (nr only) or an empty one (nr, hw_idx).
TEST(SampleParser, EmptyBranchStackIsReadBothWays) {
  SampleFormat f;
  f.sample_type = PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_DATA_SRC;
  f.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
  ParsedSample s;
  ASSERT_TRUE(parse_sample(Builder().u64(0).u64(1000).build(), f, s).ok());
  EXPECT_FALSE(s.branch_stack.has_hw_idx);
  EXPECT_EQ(s.data_src, 1000u);
  ASSERT_TRUE(parse_sample(Builder().u64(0).u64(5).u64(1000).build(), f, s).ok());
  EXPECT_TRUE(s.branch_stack.has_hw_idx);
  EXPECT_EQ(s.branch_stack.hw_idx, 5u);
  EXPECT_EQ(s.data_src, 1000u);
  expect_contiguous(s);
  // Neither reading fits: the error of the one that got further.
  const ParseStatus st = parse_sample(Builder().u64(0).u64(5).u64(1000).u64(1).build(), f, s);
  EXPECT_EQ(st.error, ParseError::kTrailingBytes);
  EXPECT_EQ(st.offset, 32u);
}

TEST(SampleParser, BytesPastHeaderSizeAreIgnored) {
  SampleFormat f;
  f.sample_type = PERF_SAMPLE_IP;
  std::vector<std::uint8_t> rec = Builder().u64(0x1234).fill(16, 0xff).build(16);
  ParsedSample s;
  ASSERT_TRUE(parse_sample(rec, f, s).ok());
  EXPECT_EQ(s.ip, 0x1234u);
}

struct Corrupt {
  const char* what;
  SampleFormat format;
  std::vector<std::uint8_t> record;
  ParseError error;
  std::uint32_t offset;
};

SampleFormat fmt(std::uint64_t type, std::uint64_t read_format = 0) {
  SampleFormat f;
  f.sample_type = type;
  f.read_format = read_format;
  f.sample_regs_user = 0xff;
  return f;
}

TEST(SampleParser, CorruptRecordsFailCleanly) {
  const std::vector<Corrupt> cases = {
      {"empty", fmt(PERF_SAMPLE_IP), {}, ParseError::kTruncated, 0},
      {"half a header", fmt(PERF_SAMPLE_IP), {9, 0, 0, 0}, ParseError::kTruncated, 0},
      {"size 0", fmt(PERF_SAMPLE_IP), Builder().u64(1).build(0), ParseError::kBadRecordSize, 0},
      {"size 4", fmt(PERF_SAMPLE_IP), Builder().u64(1).build(4), ParseError::kBadRecordSize, 0},
      {"size 12", fmt(PERF_SAMPLE_IP), Builder().u64(1).build(12), ParseError::kBadRecordSize, 0},
      {"size past the span", fmt(PERF_SAMPLE_IP), Builder().u64(1).build(24),
       ParseError::kTruncated, 0},
      {"not a sample", fmt(PERF_SAMPLE_IP), Builder(PERF_RECORD_LOST).u64(1).u64(2).build(),
       ParseError::kWrongType, 0},
      {"fixed field missing", fmt(PERF_SAMPLE_IP | PERF_SAMPLE_TIME), Builder().u64(1).build(),
       ParseError::kFieldOverrun, 16},
      {"trailing bytes", fmt(PERF_SAMPLE_IP), Builder().u64(1).u64(2).build(),
       ParseError::kTrailingBytes, 16},
      {"no fields, one word", fmt(0), Builder().u64(1).build(), ParseError::kTrailingBytes, 8},
      {"callchain nr past the end", fmt(PERF_SAMPLE_CALLCHAIN),
       Builder().u64(3).u64(1).u64(2).build(), ParseError::kFieldOverrun, 16},
      {"callchain nr wraps a multiplication", fmt(PERF_SAMPLE_CALLCHAIN),
       Builder().u64(1ULL << 61).u64(1).build(), ParseError::kFieldOverrun, 16},
      {"callchain nr all ones", fmt(PERF_SAMPLE_CALLCHAIN), Builder().u64(~0ULL).u64(1).build(),
       ParseError::kFieldOverrun, 16},
      {"read group nr past the end", fmt(PERF_SAMPLE_READ, PERF_FORMAT_GROUP | PERF_FORMAT_ID),
       Builder().u64(2).u64(1).u64(2).build(), ParseError::kFieldOverrun, 16},
      {"read group nr huge", fmt(PERF_SAMPLE_READ, PERF_FORMAT_GROUP | PERF_FORMAT_LOST),
       Builder().u64(1ULL << 62).u64(1).u64(2).build(), ParseError::kFieldOverrun, 16},
      {"raw size past the end", fmt(PERF_SAMPLE_RAW), Builder().u32(12).u32(0).build(),
       ParseError::kFieldOverrun, 12},
      {"raw size all ones", fmt(PERF_SAMPLE_RAW), Builder().u32(~0U).u32(0).build(),
       ParseError::kFieldOverrun, 12},
      {"raw leaves trailing bytes", fmt(PERF_SAMPLE_RAW), Builder().u32(4).u32(0).u64(0).build(),
       ParseError::kTrailingBytes, 16},
      {"regs missing", fmt(PERF_SAMPLE_REGS_USER), Builder().u64(2).u64(1).build(),
       ParseError::kFieldOverrun, 16},
      {"stack size past the end", fmt(PERF_SAMPLE_STACK_USER),
       Builder().u64(64).fill(8, 0).u64(8).build(), ParseError::kFieldOverrun, 16},
      {"stack size huge", fmt(PERF_SAMPLE_STACK_USER), Builder().u64(~0ULL >> 1).u64(8).build(),
       ParseError::kFieldOverrun, 16},
      {"stack without dyn_size", fmt(PERF_SAMPLE_STACK_USER), Builder().u64(8).fill(8, 0).build(),
       ParseError::kFieldOverrun, 24},
      {"aux size past the end", fmt(PERF_SAMPLE_AUX), Builder().u64(16).u64(0).build(),
       ParseError::kFieldOverrun, 16},
      {"branch nr past the end", fmt(PERF_SAMPLE_BRANCH_STACK), Builder().u64(1).u64(0).build(),
       ParseError::kFieldOverrun, 16},
  };
  for (const Corrupt& c : cases) {
    SCOPED_TRACE(c.what);
    // An exact-size heap copy: ASan builds catch any read past it.
    auto copy = std::make_unique<std::uint8_t[]>(c.record.size());
    if (!c.record.empty()) std::memcpy(copy.get(), c.record.data(), c.record.size());
    ParsedSample s;
    const ParseStatus st = parse_sample({copy.get(), c.record.size()}, c.format, s);
    EXPECT_EQ(st.error, c.error) << to_string(st.error);
    EXPECT_EQ(st.offset, c.offset);
  }
}

// Random corruption of valid records: always an answer, every reported field inside the record.
TEST(SampleParser, MutatedRecordsNeverOverread) {
  const std::vector<std::uint8_t> base = from_hex(kOracleSample);
  const SampleFormat f = oracle_format();
  std::mt19937_64 rng(12345);
  int failures = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<std::uint8_t> rec = base;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      const std::size_t at = rng() % rec.size();
      rec[at] = static_cast<std::uint8_t>(rng());
    }
    rec.resize(rng() % 2 == 0 ? rec.size() : rng() % rec.size());
    auto copy = std::make_unique<std::uint8_t[]>(rec.size() + 1);
    if (!rec.empty()) std::memcpy(copy.get(), rec.data(), rec.size());
    ParsedSample s;
    const ParseStatus st = parse_sample({copy.get(), rec.size()}, f, s);
    if (!st.ok()) {
      ++failures;
      continue;
    }
    for (const SampleField& field : s.fields) {
      ASSERT_LE(field.offset + field.size, s.header.size) << field.name;
      ASSERT_LE(s.header.size, rec.size());
    }
  }
  EXPECT_GT(failures, 0);
}

// LOST with sample_id_all from kernel-oracle.md §3: {id, lost} then the 40-byte trailer.
TEST(SampleIdParser, OracleLostTrailer) {
  const std::uint64_t type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                             PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU |
                             PERF_SAMPLE_PERIOD;
  const auto rec = Builder(PERF_RECORD_LOST, 0)
                       .u64(597)
                       .u64(432)
                       .u32(100)
                       .u32(101)
                       .u64(5555)
                       .u64(597)
                       .u32(1)
                       .u32(0)
                       .u64(597)
                       .build();
  ASSERT_EQ(rec.size(), 64u);
  ParsedSampleId id;
  const ParseStatus st = parse_sample_id(rec, type, id);
  ASSERT_TRUE(st.ok()) << to_string(st.error);
  EXPECT_EQ(id.offset, 24u);
  EXPECT_EQ(names(id.fields), (std::vector<std::string>{"pid", "tid", "time", "id", "cpu",
                                                        "cpu_reserved", "identifier"}));
  EXPECT_EQ(id.pid, 100u);
  EXPECT_EQ(id.tid, 101u);
  EXPECT_EQ(id.time, 5555u);
  EXPECT_EQ(id.id, 597u);
  EXPECT_EQ(id.cpu, 1u);
  EXPECT_EQ(id.identifier, 597u);
  EXPECT_EQ(id.fields.back().offset, 56u);
}

TEST(SampleIdParser, ReusedTrailerHoldsOnlyTheLastRecordsFields) {
  const auto rec = Builder(PERF_RECORD_COMM, 0).u64(1).u64(2).u64(3).build();
  ParsedSampleId id;
  ASSERT_TRUE(parse_sample_id(rec, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID, id).ok());
  EXPECT_EQ(id.fields.size(), 4u);
  EXPECT_EQ(id.time, 2u);
  ASSERT_TRUE(parse_sample_id(rec, PERF_SAMPLE_STREAM_ID, id).ok());
  EXPECT_EQ(names(id.fields), (std::vector<std::string>{"stream_id"}));
  EXPECT_EQ(id.time, 0u);
  EXPECT_EQ(id.stream_id, 3u);
}

TEST(SampleIdParser, StreamIdAndEmptyTrailer) {
  const auto rec = Builder(PERF_RECORD_COMM, 0).u64(1).u64(2).u64(3).build();
  ParsedSampleId id;
  ASSERT_TRUE(parse_sample_id(rec, PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_IP, id).ok());
  EXPECT_EQ(id.stream_id, 3u);
  EXPECT_EQ(id.offset, 24u);
  ASSERT_TRUE(parse_sample_id(rec, PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD, id).ok());
  EXPECT_TRUE(id.fields.empty());
  EXPECT_EQ(id.offset, 32u);
}

TEST(SampleIdParser, Errors) {
  ParsedSampleId id;
  const std::uint64_t type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID;
  EXPECT_EQ(parse_sample_id(Builder(PERF_RECORD_LOST).u64(1).u64(2).build(), type, id).error,
            ParseError::kFieldOverrun);
  EXPECT_EQ(parse_sample_id(Builder().u64(1).u64(2).u64(3).build(), type, id).error,
            ParseError::kWrongType);
  EXPECT_EQ(parse_sample_id(Builder(PERF_RECORD_LOST).u64(1).build(40), type, id).error,
            ParseError::kTruncated);
  EXPECT_EQ(parse_sample_id(Builder(PERF_RECORD_LOST).u64(1).build(9), type, id).error,
            ParseError::kBadRecordSize);
}

}  // namespace
}  // namespace userperf::abi
