// The recorder never trusts a ring: the recorded program holds the memfd and writes the memory.
// Only memfds whose size is sealed are mapped (shrinking an unsealed one under the mapping would
// kill the recorder with SIGBUS), and a record that would stop perf (no kernel type, a SAMPLE that
// does not parse as its event's, an id of no event of the ring) marks the ring corrupt: the
// records before it are in the file, the writer goes on with the other rings.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "api/engine_instance.hpp"
#include "core/sample_output.hpp"
#include "perfdata/reader.hpp"
#include "record/recorder/thread_ring.hpp"
#include "ring/ring_memory.hpp"
#include "support/test_events.hpp"
#include "unit/perfdata/test_files.hpp"
#include "userperf/userperf.h"

namespace userperf::record {
namespace {

TEST(ThreadRing, RefusesAMemfdWhoseSizeIsNotSealed) {
  const int fd = memfd_create("unsealed-ring", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(3 * ring::page_size())), 0);
  const auto mapped = ThreadRing::map(fd, 1, 1, {});
  ASSERT_FALSE(mapped);
  EXPECT_NE(mapped.error().message.find("sealed"), std::string::npos) << mapped.error().message;
  close(fd);
}

constexpr std::uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                      PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;

// A test-PMU event with a ring holding three good samples, the recorder's ThreadRing over the
// same memfd, and a Writer into a scratch file.
class CorruptRing : public ::testing::Test {
 protected:
  void SetUp() override {
    perf_event_attr attr = testing::test_attr(kSampleType);
    attr.sample_id_all = 1;
    fd_ = userperf_perf_event_open(&attr, 0, -1, -1, 0);
    ASSERT_GE(fd_, 0);
    ASSERT_EQ(userperf_ioctl(fd_, PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&id_)), 0);
    mapped_ = std::make_unique<testing::MappedRing>(fd_, 4);
    ASSERT_TRUE(mapped_->ok());
    core::Event* event = api::engine().event(fd_);
    chain_[0] = PERF_CONTEXT_USER;
    chain_[1] = 0x401000;
    data_.ip = 0x401000;
    extras_.callchain = chain_;
    extras_.callchain_nr = 2;
    data_.extras = &extras_;
    for (int i = 0; i < 3; ++i) ASSERT_EQ(core::output_sample(*event, data_), 0);
    auto mapped = ThreadRing::map(userperf_event_ring_fd(fd_), getpid(), gettid(), {{id_, attr}});
    ASSERT_TRUE(mapped) << mapped.error().message;
    ring_ = std::move(*mapped);
    path_ = std::filesystem::temp_directory_path() / ("thread-ring-" + std::to_string(getpid()));
    writer_ = perfdata::testing::create_writer(path_);
    ASSERT_TRUE(writer_);
    ASSERT_EQ(writer_->add_attr(attr, {&id_, 1}), 0);
  }
  void TearDown() override {
    ring_.reset();
    mapped_.reset();
    if (fd_ >= 0) userperf_close(fd_);
    std::filesystem::remove(path_);
  }

  // Writes `bytes` as the next record of the ring, as a program scribbling over it would.
  void append_raw(const std::vector<std::uint8_t>& bytes) {
    perf_event_mmap_page* control = mapped_->control();
    std::atomic_ref<__u64> head(control->data_head);
    const std::uint64_t at = head.load();
    const std::uint64_t size = mapped_->view.data_size;
    // Through the memfd, as the program's own mapping (the consumer's maps the data read-only).
    void* base = mmap(nullptr, mapped_->length, PROT_READ | PROT_WRITE, MAP_SHARED,
                      userperf_event_ring_fd(fd_), 0);
    ASSERT_NE(base, MAP_FAILED);
    auto* data = static_cast<std::uint8_t*>(base) + ring::page_size();
    for (std::size_t i = 0; i < bytes.size(); ++i) data[(at + i) & (size - 1)] = bytes[i];
    munmap(base, mapped_->length);
    head.store(at + bytes.size(), std::memory_order_release);
  }

  // A copy of the first good sample with `edit` applied.
  std::vector<std::uint8_t> edited_sample(void (*edit)(std::vector<std::uint8_t>&)) {
    ring::Reader reader(mapped_->view);  // read, not consumed: no commit
    ring::Record r;
    EXPECT_EQ(reader.begin(), ring::ReadStatus::kOk);
    EXPECT_EQ(reader.next(r), ring::ReadStatus::kOk);
    std::vector<std::uint8_t> bytes(r.bytes.begin(), r.bytes.end());
    edit(bytes);
    return bytes;
  }

  // Drains: the ring is reported corrupt, the three good samples are written and the writer can
  // still finish a file perfdata reads back with exactly those samples.
  void expect_corrupt_after_three_samples(const std::string& why) {
    DrainCounts counts;
    const Expected<void> drained = ring_->drain(*writer_, counts);
    ASSERT_FALSE(drained);
    const std::string& error = drained.error().message;
    EXPECT_NE(error.find("corrupt"), std::string::npos) << error;
    EXPECT_NE(error.find(why), std::string::npos) << error;
    EXPECT_EQ(counts.samples, 3u);
    EXPECT_TRUE(ring_->broken());
    EXPECT_FALSE(writer_->failed()) << writer_->error().message;
    ASSERT_TRUE(writer_->finish()) << writer_->error().message;
    auto reader = perfdata::testing::open_reader(path_);
    ASSERT_TRUE(reader);
    perfdata::RecordCursor cursor = reader->records();
    perfdata::RecordView record;
    int samples = 0;
    while (cursor.next(record) == perfdata::RecordCursor::Next::kRecord) {
      samples += record.header.type == PERF_RECORD_SAMPLE;
    }
    EXPECT_EQ(samples, 3);
    DrainCounts again;
    EXPECT_TRUE(ring_->drain(*writer_, again));  // never read again
    EXPECT_EQ(again.records, 0u);
  }

  int fd_ = -1;
  std::uint64_t id_ = 0;
  std::unique_ptr<testing::MappedRing> mapped_;
  std::uint64_t chain_[2] = {};
  core::SampleExtras extras_;
  core::SampleData data_;
  std::unique_ptr<ThreadRing> ring_;
  std::filesystem::path path_;
  std::unique_ptr<perfdata::Writer> writer_;
};

TEST_F(CorruptRing, GoodRecordsDrainWhole) {
  DrainCounts counts;
  const Expected<void> drained = ring_->drain(*writer_, counts);
  EXPECT_TRUE(drained) << drained.error().message;
  EXPECT_EQ(counts.samples, 3u);
  EXPECT_FALSE(ring_->broken());
}

TEST_F(CorruptRing, RecordOfNoKernelType) {
  append_raw(edited_sample([](std::vector<std::uint8_t>& b) { b[0] = 27; }));
  expect_corrupt_after_three_samples("record type 27");
}

TEST_F(CorruptRing, SampleOfAnUnknownId) {
  append_raw(edited_sample([](std::vector<std::uint8_t>& b) { b[8] ^= 0x40; }));
  expect_corrupt_after_three_samples("no event of this ring");
}

TEST_F(CorruptRing, SampleWhoseCallchainRunsPastIt) {
  // IDENTIFIER, IP, TID, TIME, then the callchain's nr at byte 8 + 32.
  append_raw(edited_sample([](std::vector<std::uint8_t>& b) { b[40] = 200; }));
  expect_corrupt_after_three_samples("a sample:");
}

TEST_F(CorruptRing, DataTailMovedByTheProgram) {
  // The program rewinds data_tail after a drain: the records already written would read as new.
  DrainCounts first;
  ASSERT_TRUE(ring_->drain(*writer_, first));
  EXPECT_EQ(first.samples, 3u);
  std::atomic_ref<__u64>(mapped_->control()->data_tail).store(0, std::memory_order_release);
  DrainCounts second;
  const Expected<void> drained = ring_->drain(*writer_, second);
  ASSERT_FALSE(drained);
  EXPECT_NE(drained.error().message.find("data_tail 0 is not where the recorder left it"),
            std::string::npos)
      << drained.error().message;
  EXPECT_EQ(second.records, 0u) << "records written twice";
  EXPECT_TRUE(ring_->broken());
}

}  // namespace
}  // namespace userperf::record
