// Writer -> Reader round trips: attrs and ids, every feature, records, id -> attr mapping, the
// writer's checks, and what an unfinished file reads as.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>

#include "perfdata/reader.hpp"
#include "perfdata/writer.hpp"
#include "unit/perfdata/records.hpp"
#include "unit/perfdata/sample_file.hpp"
#include "unit/perfdata/test_files.hpp"

namespace userperf::perfdata {
namespace {

using testing::TempDir;

perf_event_attr sample_attr(std::uint32_t type, std::uint64_t config) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = type;
  attr.config = config;
  attr.sample_type = testing::kSampleType;
  attr.sample_id_all = 1;
  return attr;
}

Features all_features() {
  Features f;
  f.hostname = "host-a";
  f.osrelease = "6.1.0-test";
  f.version = "userperf test";
  f.arch = "x86_64";
  f.nrcpus = NrCpus{8, 4};
  f.cmdline = std::vector<std::string>{"userperf", "record", "--", "a b"};
  f.pmu_mappings = std::vector<PmuMapping>{{1, "software"}, {9, "calltrace"}, {10, "log"}};
  f.groups = std::vector<GroupDesc>{{"{anon_group}", 0, 2}, {"g2", 2, 1}};
  return f;
}

TEST(PerfdataRoundTrip, AttrsIdsFeaturesAndRecords) {
  TempDir dir;
  const std::string path = dir.file("a.data");
  auto writer = testing::create_writer(path);
  ASSERT_TRUE(writer);
  const std::uint64_t ids0[] = {11, 12};
  const std::uint64_t ids1[] = {21};
  const std::uint64_t ids2[] = {31, 32, 33};
  ASSERT_EQ(writer->add_attr(sample_attr(9, 0), ids0), 0);
  ASSERT_EQ(writer->add_attr(sample_attr(PERF_TYPE_SOFTWARE, 0), ids1), 1);
  ASSERT_EQ(writer->add_attr(sample_attr(10, 7), ids2), 2);
  const testing::Trailer t{5, 6, 100, 21};
  std::vector<std::vector<std::uint8_t>> records = {
      testing::comm_record(t, "worker"),
      testing::mmap2_record(t, 0x400000, 0x1000, 0, "/bin/true"),
      testing::sample_record(testing::Trailer{5, 6, 101, 12}, 0x401000, 1000, false),
      testing::aux_record(testing::Trailer{5, 6, 102, 33}, 0, 64, PERF_AUX_FLAG_TRUNCATED),
  };
  for (const auto& r : records) ASSERT_TRUE(writer->append(r)) << writer->error().message;
  ASSERT_TRUE(writer->append_finished_round());
  writer->features() = all_features();
  // EVENT_DESC (bit 12) sits between CMDLINE and PMU_MAPPINGS: the index must stay in bit order.
  ASSERT_TRUE(writer->set_event_name(0, "calltrace"));
  ASSERT_TRUE(writer->set_event_name(2, "log"));
  EXPECT_FALSE(writer->set_event_name(3, "none")) << "no attr 3";
  ASSERT_TRUE(writer->finish()) << writer->error().message;

  auto reader = testing::open_reader(path);
  ASSERT_TRUE(reader);
  EXPECT_TRUE(reader->complete());
  EXPECT_TRUE(reader->finished());
  EXPECT_EQ(reader->unfinished_note(0), "");
  ASSERT_EQ(reader->attrs().size(), 3u);
  EXPECT_EQ(reader->header().attr_size, sizeof(perf_event_attr) + 16);
  const perf_event_attr expected[] = {sample_attr(9, 0), sample_attr(PERF_TYPE_SOFTWARE, 0),
                                      sample_attr(10, 7)};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(std::memcmp(&reader->attrs()[i].attr, &expected[i], sizeof expected[i]), 0) << i;
  }
  EXPECT_EQ(reader->attrs()[0].ids, (std::vector<std::uint64_t>{11, 12}));
  EXPECT_EQ(reader->attrs()[1].ids, (std::vector<std::uint64_t>{21}));
  EXPECT_EQ(reader->attrs()[2].ids, (std::vector<std::uint64_t>{31, 32, 33}));

  const Features& f = reader->features();
  const Features want = all_features();
  EXPECT_EQ(f.hostname, want.hostname);
  EXPECT_EQ(f.osrelease, want.osrelease);
  EXPECT_EQ(f.version, want.version);
  EXPECT_EQ(f.arch, want.arch);
  ASSERT_TRUE(f.nrcpus);
  EXPECT_EQ(f.nrcpus->available, 8u);
  EXPECT_EQ(f.nrcpus->online, 4u);
  EXPECT_EQ(f.cmdline, want.cmdline);
  ASSERT_TRUE(f.pmu_mappings);
  ASSERT_EQ(f.pmu_mappings->size(), 3u);
  EXPECT_EQ((*f.pmu_mappings)[1].type, 9u);
  EXPECT_EQ(*f.pmu_name(10), "log");
  ASSERT_TRUE(f.groups);
  ASSERT_EQ(f.groups->size(), 2u);
  EXPECT_EQ((*f.groups)[0].name, "{anon_group}");
  EXPECT_EQ((*f.groups)[1].leader, 2u);
  EXPECT_EQ(f.group_of(1)->leader, 0u);
  ASSERT_TRUE(f.event_desc);
  ASSERT_EQ(f.event_desc->size(), 3u);
  EXPECT_EQ((*f.event_desc)[0].name, "calltrace");
  EXPECT_EQ((*f.event_desc)[1].name, "");
  EXPECT_EQ((*f.event_desc)[2].name, "log");
  EXPECT_EQ((*f.event_desc)[2].ids, (std::vector<std::uint64_t>{31, 32, 33}));
  ASSERT_EQ((*f.event_desc)[2].attr.size(), sizeof(perf_event_attr));
  EXPECT_EQ(std::memcmp((*f.event_desc)[2].attr.data(), &expected[2], sizeof expected[2]), 0);
  EXPECT_EQ(reader->feature_sections().size(), 9u);

  RecordCursor cursor = reader->records();
  RecordView record;
  const int want_attr[] = {1, 1, 0, 2, -1};
  std::size_t n = 0;
  while (cursor.next(record) == RecordCursor::Next::kRecord) {
    if (n < records.size()) {
      EXPECT_EQ(std::vector<std::uint8_t>(record.bytes.begin(), record.bytes.end()), records[n]);
    } else {
      EXPECT_EQ(record.header.type, kRecordFinishedRound);
    }
    EXPECT_EQ(reader->attr_index(record), want_attr[n]) << n;
    ++n;
  }
  EXPECT_FALSE(cursor.failed()) << cursor.error().message;
  EXPECT_EQ(n, 5u);
}

TEST(PerfdataRoundTrip, SingleAttrWithoutIdsOwnsEveryRecord) {
  TempDir dir;
  auto writer = testing::create_writer(dir.file("one.data"));
  perf_event_attr attr = sample_attr(PERF_TYPE_SOFTWARE, 0);
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
  attr.sample_id_all = 0;
  attr.size = 112;  // PERF_ATTR_SIZE_VER6: written with its own size
  ASSERT_EQ(writer->add_attr(attr, {}), 0);
  testing::RecordBuilder sample(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  ASSERT_TRUE(writer->append(sample.u64(0x1234).u32(1).u32(2).done()));
  ASSERT_TRUE(writer->finish());
  auto reader = testing::open_reader(dir.file("one.data"));
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->header().attr_size, 112u + 16);
  EXPECT_EQ(reader->attrs()[0].size, 112u);
  EXPECT_TRUE(reader->attrs()[0].ids.empty());
  RecordCursor cursor = reader->records();
  RecordView record;
  ASSERT_EQ(cursor.next(record), RecordCursor::Next::kRecord);
  EXPECT_EQ(reader->attr_index(record), 0);
  EXPECT_EQ(cursor.next(record), RecordCursor::Next::kEnd);
  EXPECT_FALSE(reader->features().hostname);
}

TEST(PerfdataRoundTrip, EmptyFinishedFileIsNotMistakenForUnfinished) {
  TempDir dir;
  auto writer = testing::create_writer(dir.file("empty.data"));
  ASSERT_EQ(writer->add_attr(sample_attr(1, 0), {}), 0);
  ASSERT_TRUE(writer->finish());
  auto reader = testing::open_reader(dir.file("empty.data"));
  ASSERT_TRUE(reader);
  EXPECT_TRUE(reader->complete());
  EXPECT_NE(reader->header().data.size, 0u);
}

TEST(PerfdataWriter, RejectsRecordsPerfCannotRead) {
  TempDir dir;
  auto make = [&] {
    auto w = testing::create_writer(dir.file("w.data"));
    w->add_attr(sample_attr(1, 0), {});
    return w;
  };
  std::vector<std::uint8_t> record = testing::lost_samples_record({}, 1);
  {
    auto w = make();
    EXPECT_FALSE(w->append(std::span(record).first(record.size() - 8)));
    EXPECT_EQ(w->error().code, EINVAL);
    EXPECT_FALSE(w->append(record)) << "errors stick";
  }
  for (std::uint32_t type : {0u, 22u, 63u, 70u, 71u, 80u}) {
    auto w = make();
    std::vector<std::uint8_t> bad = record;
    std::memcpy(bad.data(), &type, sizeof type);
    EXPECT_FALSE(w->append(bad)) << type;
    EXPECT_NE(w->error().message.find("not a kernel record type"), std::string::npos);
  }
  {
    auto w = make();
    std::vector<std::uint8_t> odd = record;
    const std::uint16_t size = 12;
    std::memcpy(odd.data() + 6, &size, sizeof size);
    EXPECT_FALSE(w->append(std::span(odd).first(12)));
  }
  {
    auto w = make();
    ASSERT_TRUE(w->append(record));
    EXPECT_EQ(w->add_attr(sample_attr(1, 0), {}), -1);
    EXPECT_EQ(w->error().code, EBUSY);
  }
}

TEST(PerfdataWriter, RejectsAttrsPerfWouldRefuseTogether) {
  TempDir dir;
  {
    auto w = testing::create_writer(dir.file("x.data"));
    perf_event_attr small = sample_attr(1, 0);
    small.size = 112;
    ASSERT_EQ(w->add_attr(sample_attr(1, 0), {}), 0);
    EXPECT_EQ(w->add_attr(small, {}), -1);
  }
  {
    auto w = testing::create_writer(dir.file("x.data"));
    perf_event_attr no_id = sample_attr(1, 0);
    no_id.sample_type &= ~static_cast<std::uint64_t>(PERF_SAMPLE_ID);
    ASSERT_EQ(w->add_attr(sample_attr(1, 0), {}), 0);
    EXPECT_EQ(w->add_attr(no_id, {}), -1);
    EXPECT_NE(w->error().message.find("PERF_SAMPLE_ID"), std::string::npos);
  }
  {
    auto w = testing::create_writer(dir.file("x.data"));
    ASSERT_EQ(w->add_attr(sample_attr(1, 0), {}), 0);
    w->features().groups = std::vector<GroupDesc>{{"g", 0, 2}};
    EXPECT_FALSE(w->finish());
    EXPECT_NE(w->error().message.find("runs past the last attr"), std::string::npos);
  }
}

TEST(PerfdataWriter, ReportsUnwritablePathsAndFullDisks) {
  const auto unwritable = Writer::create("/nonexistent-dir/x/perf.data");
  ASSERT_FALSE(unwritable);
  EXPECT_EQ(unwritable.error().code, ENOENT);
  EXPECT_NE(unwritable.error().message.find("/nonexistent-dir/x/perf.data"), std::string::npos);

  auto full = Writer::create("/dev/full");
  if (!full) GTEST_SKIP() << "/dev/full: " << full.error().message;
  Writer* w = full->get();
  ASSERT_EQ(w->add_attr(sample_attr(1, 0), {}), 0);
  const std::vector<std::uint8_t> record = testing::lost_samples_record({}, 1);
  bool ok = true;
  for (int i = 0; i < 100000 && ok; ++i) ok = w->append(record);  // fills the write buffer
  ok = ok && w->finish();
  EXPECT_FALSE(ok);
  EXPECT_EQ(w->error().code, ENOSPC);
  EXPECT_NE(w->error().message.find("No space left"), std::string::npos);
}

TEST(PerfdataWriter, CheckpointedFileReadsWholeUpToTheCheckpoint) {
  // What a recorder killed after a drain pass leaves: the header says the data up to the last
  // checkpoint, records appended after it (in the file or not) are past data.size.
  TempDir dir;
  const std::string path = dir.file("checkpoint.data");
  const std::vector<std::uint8_t> record = testing::lost_samples_record({}, 7);
  {
    auto w = testing::create_writer(path);
    ASSERT_EQ(w->add_attr(sample_attr(1, 0), {}), 0);
    ASSERT_TRUE(w->checkpoint()) << "before any record: nothing to do";
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(w->append(record));
    ASSERT_TRUE(w->checkpoint());
    EXPECT_EQ(w->checkpointed_size(), 3 * record.size());
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(w->append(record));
    // Destroyed without finish(): its buffer reaches the file, the header stays the checkpoint's.
  }
  auto reader = testing::open_reader(path);
  ASSERT_TRUE(reader);
  EXPECT_TRUE(reader->complete());
  EXPECT_EQ(reader->header().data.size, 3 * record.size());
  EXPECT_FALSE(reader->finished());
  EXPECT_NE(reader->unfinished_note(0).find(std::to_string(2 * record.size()) +
                                            " bytes after it are not read"),
            std::string::npos)
      << reader->unfinished_note(0);
  RecordCursor cursor = reader->records();
  RecordView v;
  int n = 0;
  while (cursor.next(v) == RecordCursor::Next::kRecord) ++n;
  EXPECT_FALSE(cursor.failed()) << cursor.error().message;
  EXPECT_EQ(n, 3);
}

TEST(PerfdataWriter, UnfinishedFileReadsUpToTheLastWholeRecord) {
  TempDir dir;
  const std::string path = dir.file("crash.data");
  std::vector<std::uint8_t> record = testing::lost_samples_record({}, 7);
  {
    auto w = testing::create_writer(path);
    ASSERT_EQ(w->add_attr(sample_attr(1, 0), {}), 0);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(w->append(record));
    // Destroyed without finish(): what a crash leaves, once the buffer reached the file.
  }
  auto reader = testing::open_reader(path);
  ASSERT_TRUE(reader);
  EXPECT_FALSE(reader->complete());
  EXPECT_EQ(reader->header().data.size, 0u);
  EXPECT_FALSE(reader->finished());
  EXPECT_NE(reader->unfinished_note(0).find("read to the end of the file"), std::string::npos);
  auto count = [](const Reader& r, std::uint64_t& tail) {
    RecordCursor cursor = r.records();
    RecordView v;
    int n = 0;
    while (cursor.next(v) == RecordCursor::Next::kRecord) ++n;
    EXPECT_FALSE(cursor.failed()) << cursor.error().message;
    tail = cursor.truncated_tail();
    return n;
  };
  std::uint64_t tail = 0;
  EXPECT_EQ(count(*reader, tail), 3);
  EXPECT_EQ(tail, 0u);

  std::vector<std::uint8_t> bytes = testing::read_file(path);
  bytes.resize(bytes.size() - 5);  // torn last record
  auto torn = testing::reader_from(bytes);
  ASSERT_TRUE(torn);
  EXPECT_EQ(count(*torn, tail), 2);
  EXPECT_EQ(tail, record.size() - 5);
}

TEST(PerfdataWriter, SampleFileHasTheLayoutPerfReads) {
  TempDir dir;
  const std::string path = dir.file("s.data");
  ASSERT_EQ(testing::write_sample_file(path), "");
  auto reader = testing::open_reader(path);
  ASSERT_TRUE(reader);
  const FileHeader& h = reader->header();
  EXPECT_EQ(h.size, 104u);
  EXPECT_EQ(h.attrs.offset, 104u);
  EXPECT_EQ(h.attrs.size, 2 * (sizeof(perf_event_attr) + 16));
  EXPECT_EQ(h.data.offset, 104 + h.attrs.size + 2 * 8) << "ids arrays sit between attrs and data";
  EXPECT_EQ(reader->attr_index_of_id(testing::kLeaderId), 0);
  EXPECT_EQ(reader->attr_index_of_id(testing::kSiblingId), 1);
}

TEST(PerfdataWriter, IdsAddedAfterTheDataBeganAreListedWhenFinished) {
  TempDir dir;
  const std::string path = dir.file("late.data");
  const std::vector<std::uint8_t> record = testing::lost_samples_record({}, 7);
  auto w = testing::create_writer(path);
  const std::uint64_t early[] = {1};
  ASSERT_EQ(w->add_attr(sample_attr(1, 0), early), 0);
  ASSERT_EQ(w->add_attr(sample_attr(1, 1), {}), 1);
  ASSERT_TRUE(w->append(record));
  const std::uint64_t late0[] = {100, 101};
  const std::uint64_t late1[] = {200};
  ASSERT_TRUE(w->add_ids(0, late0));
  ASSERT_TRUE(w->add_ids(1, late1));
  EXPECT_FALSE(w->add_ids(2, late1)) << "no attr 2";
  EXPECT_FALSE(w->failed()) << "a wrong index does not spoil the file";
  ASSERT_TRUE(w->set_event_name(1, "second"));
  ASSERT_TRUE(w->append(record));
  ASSERT_TRUE(w->finish()) << w->error().message;
  EXPECT_FALSE(w->add_ids(0, late1));

  auto reader = testing::open_reader(path);
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->attrs()[0].ids, (std::vector<std::uint64_t>{1, 100, 101}));
  EXPECT_EQ(reader->attrs()[1].ids, (std::vector<std::uint64_t>{200}));
  EXPECT_EQ(reader->attr_index_of_id(101), 0);
  EXPECT_EQ(reader->attr_index_of_id(200), 1);
  ASSERT_TRUE(reader->features().event_desc.has_value());
  EXPECT_EQ(reader->features().event_desc->at(1).ids, (std::vector<std::uint64_t>{200}));
  int records = 0;
  RecordCursor cursor = reader->records();
  RecordView v;
  while (cursor.next(v) == RecordCursor::Next::kRecord) ++records;
  EXPECT_EQ(records, 2) << "the late id arrays sit after the data, not in it";
}

TEST(PerfdataWriter, CrashedFileKeepsTheIdsOfTheFirstRecordsTime) {
  TempDir dir;
  const std::string path = dir.file("crash-ids.data");
  {
    auto w = testing::create_writer(path);
    const std::uint64_t early[] = {1};
    ASSERT_EQ(w->add_attr(sample_attr(1, 0), early), 0);
    ASSERT_TRUE(w->append(testing::lost_samples_record({}, 7)));
    const std::uint64_t late[] = {100};
    ASSERT_TRUE(w->add_ids(0, late));
  }
  auto reader = testing::open_reader(path);
  ASSERT_TRUE(reader);
  EXPECT_FALSE(reader->complete());
  EXPECT_EQ(reader->attrs()[0].ids, (std::vector<std::uint64_t>{1}));
}

TEST(PerfdataRoundTrip, BuildIdsAndTracingData) {
  TempDir dir;
  const std::string path = dir.file("bid.data");
  auto w = testing::create_writer(path);
  ASSERT_EQ(w->add_attr(sample_attr(1, 0), {}), 0);
  const std::vector<std::uint8_t> id20(20, 0xab), id8(8, 0x12);
  w->features().build_ids = std::vector<BuildIdEntry>{
      {-1, PERF_RECORD_MISC_USER, id20, "/usr/lib/x86_64-linux-gnu/libc.so.6"},
      {-1, PERF_RECORD_MISC_USER, id8, std::string(70, 'x')}};
  w->features().tracing_data = std::vector<std::uint8_t>{1, 2, 3, 4, 5};
  ASSERT_TRUE(w->finish()) << w->error().message;
  auto reader = testing::open_reader(path);
  ASSERT_TRUE(reader);
  const Features& f = reader->features();
  ASSERT_TRUE(f.build_ids.has_value());
  ASSERT_EQ(f.build_ids->size(), 2u);
  EXPECT_EQ(f.build_ids->at(0).pid, -1);
  EXPECT_EQ(f.build_ids->at(0).misc, PERF_RECORD_MISC_USER);
  EXPECT_EQ(f.build_ids->at(0).id, id20);
  EXPECT_EQ(f.build_ids->at(0).filename, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(f.build_ids->at(1).id, id8);
  EXPECT_EQ(f.build_ids->at(1).filename, std::string(70, 'x'));
  EXPECT_EQ(f.tracing_data, (std::vector<std::uint8_t>{1, 2, 3, 4, 5}));
}

TEST(PerfdataFeatures, ReadsTheGnuBuildIdOfAnElfFile) {
  char self[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
  const std::vector<std::uint8_t> id = read_build_id(self);
  EXPECT_EQ(id.size(), 20u) << "gcc links a SHA-1 build id";
  EXPECT_TRUE(read_build_id("/nonexistent").empty());
  EXPECT_TRUE(read_build_id("/proc/self/status").empty()) << "not ELF";
}

TEST(PerfdataFeatures, ATruncatedBuildIdEntryIsAnError) {
  Features f;
  f.build_ids = std::vector<BuildIdEntry>{{-1, PERF_RECORD_MISC_USER, {1, 2, 3}, "/bin/x"}};
  std::vector<std::uint8_t> body = encode_features(f).front().bytes;
  body.resize(body.size() - 10);
  Features out;
  const Expected<void> decoded = decode_feature(kFeatBuildId, body, 4096, out);
  ASSERT_FALSE(decoded);
  EXPECT_NE(decoded.error().message.find("BUILD_ID"), std::string::npos) << decoded.error().message;
}

}  // namespace
}  // namespace userperf::perfdata
