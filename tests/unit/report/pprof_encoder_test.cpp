// The protobuf encoder under pprof_writer, byte by byte against the wire format's own examples
// (https://protobuf.dev/programming-guides/encoding/), and the profile.proto it writes read back
// with a small wire-format reader: field numbers, ids, the string table. Decoders nobody here
// wrote (Google's pprof) check the whole file in cli_report_pprof.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "report/pprof_writer.hpp"
#include "report/protobuf_encoder.hpp"

namespace userperf::report {
namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}

std::string varint(std::uint64_t value) {
  std::string out;
  ProtoEncoder::append_varint(out, value);
  return out;
}

TEST(ProtoEncoder, Varints) {
  EXPECT_EQ(varint(0), bytes({0x00}));
  EXPECT_EQ(varint(1), bytes({0x01}));
  EXPECT_EQ(varint(127), bytes({0x7f}));
  EXPECT_EQ(varint(128), bytes({0x80, 0x01}));
  EXPECT_EQ(varint(150), bytes({0x96, 0x01}));  // the encoding guide's example
  EXPECT_EQ(varint(300), bytes({0xac, 0x02}));
  EXPECT_EQ(varint(~std::uint64_t{0}),
            bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

TEST(ProtoEncoder, ScalarFields) {
  ProtoEncoder out;
  out.uint64_field(1, 150);  // key (1 << 3) | 0
  out.int64_field(2, -1);    // two's complement: ten bytes, as protoc writes int64
  out.bool_field(7, true);
  out.uint64_field(3, 0);  // proto3 defaults are not written
  out.bool_field(8, false);
  EXPECT_EQ(out.bytes(), bytes({0x08, 0x96, 0x01, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                0xff, 0xff, 0x01, 0x38, 0x01}));
  // Field numbers past 15 need a two-byte key.
  ProtoEncoder wide;
  wide.uint64_field(16, 1);
  EXPECT_EQ(wide.bytes(), bytes({0x80, 0x01, 0x01}));
}

TEST(ProtoEncoder, LengthDelimited) {
  ProtoEncoder out;
  out.bytes_field(2, "testing");  // the encoding guide's example: 12 07 74 65 73 74 69 6e 67
  EXPECT_EQ(out.bytes(), bytes({0x12, 0x07}) + "testing");
  ProtoEncoder empty;
  empty.bytes_field(6, "");  // a repeated string's "" is an element: written
  EXPECT_EQ(empty.bytes(), bytes({0x32, 0x00}));
  ProtoEncoder inner, outer;
  inner.uint64_field(1, 150);
  outer.message_field(3, inner);  // the guide's nested example: 1a 03 08 96 01
  EXPECT_EQ(outer.bytes(), bytes({0x1a, 0x03, 0x08, 0x96, 0x01}));
}

TEST(ProtoEncoder, PackedRepeated) {
  ProtoEncoder out;
  const std::vector<std::uint64_t> values{3, 270, 86942};  // the guide's packed example
  out.packed_uint64_field(4, values);
  EXPECT_EQ(out.bytes(), bytes({0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05}));
  ProtoEncoder negative;
  const std::vector<std::int64_t> signed_values{-1, 1};
  negative.packed_int64_field(2, signed_values);
  EXPECT_EQ(negative.bytes(),
            bytes({0x12, 0x0b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x01}));
  ProtoEncoder none;
  none.packed_uint64_field(1, {});
  EXPECT_TRUE(none.bytes().empty());
}

TEST(StringTable, EmptyFirstAndDeduplicated) {
  StringTable strings;
  EXPECT_EQ(strings.index(""), 0);
  EXPECT_EQ(strings.index("samples"), 1);
  EXPECT_EQ(strings.index("count"), 2);
  EXPECT_EQ(strings.index("samples"), 1);
  EXPECT_EQ(strings.index(""), 0);
  EXPECT_EQ(strings.strings(), (std::vector<std::string>{"", "samples", "count"}));
}

// A wire-format reader for the test: a message's fields as (number, varint or bytes).
struct Field {
  std::uint32_t number = 0;
  std::uint64_t value = 0;
  std::string bytes;
};

std::uint64_t read_varint(const std::string& in, std::size_t& at) {
  std::uint64_t value = 0;
  for (int shift = 0;; shift += 7) {
    const auto byte = static_cast<unsigned char>(in.at(at++));
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
}

std::vector<Field> read_message(const std::string& in) {
  std::vector<Field> fields;
  for (std::size_t at = 0; at < in.size();) {
    const std::uint64_t key = read_varint(in, at);
    Field field;
    field.number = static_cast<std::uint32_t>(key >> 3);
    if ((key & 7) == 0) {
      field.value = read_varint(in, at);
    } else {
      EXPECT_EQ(key & 7, 2u);
      const std::uint64_t size = read_varint(in, at);
      field.bytes = in.substr(at, size);
      at += size;
    }
    fields.push_back(field);
  }
  return fields;
}

std::vector<std::uint64_t> read_packed(const std::string& in) {
  std::vector<std::uint64_t> values;
  for (std::size_t at = 0; at < in.size();) values.push_back(read_varint(in, at));
  return values;
}

std::multimap<std::uint32_t, Field> by_number(const std::vector<Field>& fields) {
  std::multimap<std::uint32_t, Field> map;
  for (const Field& f : fields) map.emplace(f.number, f);
  return map;
}

// Two threads of one process on cpu-clock: main calling memcpy, and main calling an address of
// libc no symbol covers; a second event whose stack the pprof of the first leaves out.
Profile small_profile() {
  Profile profile;
  EventProfile clock;
  clock.name = "cpu-clock";
  clock.attr.type = PERF_TYPE_SOFTWARE;
  clock.attr.config = PERF_COUNT_SW_CPU_CLOCK;
  clock.attr.freq = 1;
  clock.attr.sample_freq = 4000;
  EventProfile faults;
  faults.name = "page-faults";
  faults.attr.type = PERF_TYPE_SOFTWARE;
  faults.attr.config = PERF_COUNT_SW_PAGE_FAULTS;
  faults.samples = 1;
  profile.events = {clock, faults};
  profile.dsos = {{"/usr/bin/app", "app", "abcd", false},
                  {"/lib/libc.so.6", "libc.so.6", "", false}};
  profile.functions = {{"main", 0, "app.c", 10}, {"memcpy", 1, "", 0}, {"[unknown]", 1, "", 0}};
  profile.locations = {{0, 0x1010, 0, 12}, {1, 0x2020, 1, 0}, {1, 0x3030, 2, 0}};
  profile.threads = {{100, 100, "app"}, {100, 101, "worker"}};
  profile.frames = {1, 0, 2, 0, 2};
  profile.stacks = {{0, 0, 0, 2, 3, 750000}, {0, 1, 2, 2, 1, 250000}, {1, 0, 4, 1, 1, 1}};
  return profile;
}

TEST(PprofWriter, ProfileProtoFields) {
  const Profile profile = small_profile();
  const auto fields = by_number(read_message(encode_pprof(profile, {})));
  std::vector<std::string> strings;
  for (auto [it, end] = fields.equal_range(6); it != end; ++it) strings.push_back(it->second.bytes);
  ASSERT_FALSE(strings.empty());
  EXPECT_EQ(strings[0], "");
  auto string_at = [&](std::uint64_t index) { return strings.at(index); };

  // sample_type: samples/count, cpu/nanoseconds; the default is cpu.
  std::vector<std::string> types;
  for (auto [it, end] = fields.equal_range(1); it != end; ++it) {
    const auto value_type = by_number(read_message(it->second.bytes));
    types.push_back(string_at(value_type.find(1)->second.value) + "/" +
                    string_at(value_type.find(2)->second.value));
  }
  EXPECT_EQ(types, (std::vector<std::string>{"samples/count", "cpu/nanoseconds"}));
  EXPECT_EQ(string_at(fields.find(14)->second.value), "cpu");
  EXPECT_EQ(fields.find(12)->second.value, 250000u);  // 1 s / 4000 Hz in ns

  // Samples of event 0 only: locations leaf first (ids from 1), values, labels.
  ASSERT_EQ(fields.count(2), 2u);
  const auto first = by_number(read_message(fields.find(2)->second.bytes));
  EXPECT_EQ(read_packed(first.find(1)->second.bytes), (std::vector<std::uint64_t>{2, 1}));
  EXPECT_EQ(read_packed(first.find(2)->second.bytes), (std::vector<std::uint64_t>{3, 750000}));
  std::map<std::string, std::string> labels;
  for (auto [it, end] = first.equal_range(3); it != end; ++it) {
    const auto label = by_number(read_message(it->second.bytes));
    const std::string key = string_at(label.find(1)->second.value);
    labels[key] = label.count(2) ? string_at(label.find(2)->second.value)
                                 : std::to_string(label.count(3) ? label.find(3)->second.value : 0);
  }
  EXPECT_EQ(labels, (std::map<std::string, std::string>{
                        {"comm", "app"}, {"pid", "100"}, {"thread", "100"}}));

  // Mappings per Dso with build ids; functions with unknowns named by their Dso.
  ASSERT_EQ(fields.count(3), 2u);
  const auto app = by_number(read_message(fields.find(3)->second.bytes));
  EXPECT_EQ(app.find(1)->second.value, 1u);
  EXPECT_EQ(string_at(app.find(5)->second.value), "/usr/bin/app");
  EXPECT_EQ(string_at(app.find(6)->second.value), "abcd");
  EXPECT_EQ(app.find(3)->second.value, ~std::uint64_t{0});
  EXPECT_EQ(app.find(7)->second.value, 1u);  // has_functions
  EXPECT_EQ(app.find(9)->second.value, 1u);  // has_line_numbers
  std::vector<std::string> names;
  for (auto [it, end] = fields.equal_range(5); it != end; ++it) {
    names.push_back(string_at(by_number(read_message(it->second.bytes)).find(2)->second.value));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"main", "memcpy", "[unknown] libc.so.6"}));
  // The location of main: its mapping, address and line.
  ASSERT_EQ(fields.count(4), 3u);
  const auto main_location = by_number(read_message(fields.find(4)->second.bytes));
  EXPECT_EQ(main_location.find(2)->second.value, 1u);
  EXPECT_EQ(main_location.find(3)->second.value, 0x1010u);
  const auto line = by_number(read_message(main_location.find(4)->second.bytes));
  EXPECT_EQ(line.find(1)->second.value, 1u);
  EXPECT_EQ(line.find(2)->second.value, 12u);

  // Each string once.
  EXPECT_EQ(std::set<std::string>(strings.begin(), strings.end()).size(), strings.size());
}

// pprof takes the first Mapping for the main binary: the dso most stacks pass through goes first
// (user before kernel), not the first one seen.
TEST(PprofWriter, MainBinaryMappingFirst) {
  Profile profile = small_profile();
  // libc is seen first (the first stack's leaf); app is in all three stacks, libc and the kernel
  // in one each.
  profile.dsos = {{"/lib/libc.so.6", "libc.so.6", "", false},
                  {"/usr/bin/app", "app", "abcd", false},
                  {"[kernel.kallsyms]", "[kernel.kallsyms]", "", true}};
  profile.functions = {{"memcpy", 0, "", 0}, {"main", 1, "app.c", 10}, {"schedule", 2, "", 0}};
  profile.locations = {{0, 0x2020, 0, 0}, {1, 0x1010, 1, 12}, {2, 0xffff1000, 2, 0}};
  profile.frames = {0, 1, 2, 1, 1};  // memcpy<main, schedule<main, main
  profile.stacks = {{0, 0, 0, 2, 1, 1000}, {0, 0, 2, 2, 1, 1000}, {0, 1, 4, 1, 1, 1000}};
  const auto fields = by_number(read_message(encode_pprof(profile, {})));
  std::vector<std::uint64_t> mapping_ids;  // Dso index + 1, in the file's order
  for (auto [it, end] = fields.equal_range(3); it != end; ++it) {
    mapping_ids.push_back(by_number(read_message(it->second.bytes)).find(1)->second.value);
  }
  EXPECT_EQ(mapping_ids, (std::vector<std::uint64_t>{2, 1, 3}));

  // libc on more stacks than the executable (exit handlers below main): the dso named as the
  // samples' command still goes first.
  profile.frames.insert(profile.frames.end(), {0, 0, 0});
  for (std::uint32_t first = 5; first < 8; ++first)
    profile.stacks.push_back({0, 0, first, 1, 1, 1000});
  mapping_ids.clear();
  const auto more = by_number(read_message(encode_pprof(profile, {})));
  for (auto [it, end] = more.equal_range(3); it != end; ++it) {
    mapping_ids.push_back(by_number(read_message(it->second.bytes)).find(1)->second.value);
  }
  EXPECT_EQ(mapping_ids, (std::vector<std::uint64_t>{2, 1, 3}));
}

// The period's sample type and the sampling period by event kind.
TEST(PprofWriter, SampleTypesByEvent) {
  struct Case {
    std::uint32_t type;
    std::uint64_t config;
    bool freq;
    std::uint64_t period_or_freq;
    std::string name, expected_type;
    std::uint64_t expected_period;
  };
  const Case cases[] = {
      {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false, 1000000, "task-clock",
       "cpu/nanoseconds", 1000000},
      {PERF_TYPE_TRACEPOINT, 321, false, 1, "sched:sched_switch", "events/count", 1},
      {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true, 4000, "cycles", "cycles/count", 0},
  };
  for (const Case& c : cases) {
    Profile profile = small_profile();
    profile.events[0].name = c.name;
    profile.events[0].attr.type = c.type;
    profile.events[0].attr.config = c.config;
    profile.events[0].attr.freq = c.freq;
    profile.events[0].attr.sample_period = c.period_or_freq;  // sample_freq shares the field
    const auto fields = by_number(read_message(encode_pprof(profile, {})));
    std::vector<std::string> strings;
    for (auto [it, end] = fields.equal_range(6); it != end; ++it) {
      strings.push_back(it->second.bytes);
    }
    const auto period_type = by_number(read_message(fields.find(11)->second.bytes));
    EXPECT_EQ(strings.at(period_type.find(1)->second.value) + "/" +
                  strings.at(period_type.find(2)->second.value),
              c.expected_type)
        << c.name;
    EXPECT_EQ(fields.count(12) ? fields.find(12)->second.value : 0, c.expected_period) << c.name;
  }
}

// A file without attrs has no event to write: an error, nothing written.
TEST(PprofWriter, NoEventIsAnError) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  const Expected<void> written = write_pprof(Profile{}, {}, out);
  EXPECT_FALSE(written);
  EXPECT_EQ(std::ftell(out), 0);
  std::fclose(out);
}

}  // namespace
}  // namespace userperf::report
