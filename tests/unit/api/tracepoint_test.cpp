// User tracepoints from C++: the header's descriptors and emit functions, definition and late
// registration, the format text, the RAW record byte for byte, strings and byte arrays, per-thread
// events and refused descriptors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "api/engine_instance.hpp"
#include "core/engine.hpp"
#include "unit/api/tracepoint_support.hpp"
#include "userperf/userperf.h"

USERPERF_TRACEPOINT(tptest, request, (uint64_t, id), (const char*, path), (int32_t, status))
USERPERF_TRACEPOINT(tptest, blob, (uint8_t, tag), (userperf_bytes, payload), (int16_t, small))
USERPERF_TRACEPOINT(tptest, threads, (uint32_t, value))
USERPERF_TRACEPOINT(tptest, never, (uint32_t, value))
USERPERF_TRACEPOINT(tptest, periodic, (int64_t, value))

namespace userperf::testing {
namespace {

// Ids are process-wide and never undefined: every test uses its own.
constexpr std::uint64_t kRequestId = 1001;
constexpr std::uint64_t kBlobId = 1002;
constexpr std::uint64_t kThreadsId = 1003;
constexpr std::uint64_t kLateId = 1004;
constexpr std::uint64_t kPeriodicId = 1005;
constexpr std::uint64_t kReloadedId = 1006;

class TracepointTest : public ::testing::Test {
 protected:
  void SetUp() override { install_format_log(); }
};

TEST_F(TracepointTest, UndefinedTracepointStaysDisabledAndWritesNothing) {
  EXPECT_EQ(userperf_tp_tptest_never.enabled, 0);
  EXPECT_EQ(userperf_tp_tptest_never.library_slot, 0u);
  userperf_trace(tptest, never, 1);  // no event, no id: nothing happens
  EXPECT_FALSE(userperf_trace_enabled(tptest, never));
  // An id nobody defined is EINVAL (the kernel's perf_trace_init).
  EXPECT_EQ(ThreadTracepointEvent::open_event(999), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST_F(TracepointTest, DefinedWithoutEventsStaysDisabled) {
  pmu::tracepoint_define(kRequestId, "tptest:request");
  EXPECT_EQ(userperf_tp_tptest_request.enabled, 0);
  EXPECT_NE(userperf_tp_tptest_request.library_slot, 0u);
  ThreadTracepointEvent other(kRequestId);
  ASSERT_GE(other.fd, 0);
  EXPECT_EQ(userperf_tp_tptest_request.enabled, 1);
  other.close();
  EXPECT_EQ(userperf_tp_tptest_request.enabled, 0);
}

TEST_F(TracepointTest, FormatTextDescribesTheRecord) {
  pmu::tracepoint_define(kRequestId, "tptest:request");
  const std::vector<std::string> formats = FormatLog::instance().of(kRequestId);
  ASSERT_EQ(formats.size(), 1u);  // once per id, whatever the order of the tests
  EXPECT_EQ(formats[0],
            "name: request\n"
            "ID: 1001\n"
            "format:\n"
            "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
            "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
            "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
            "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
            "\n"
            "\tfield:u64 id;\toffset:8;\tsize:8;\tsigned:0;\n"
            "\tfield:__data_loc char[] path;\toffset:16;\tsize:4;\tsigned:1;\n"
            "\tfield:s32 status;\toffset:20;\tsize:4;\tsigned:1;\n"
            "\n"
            "print fmt: \"id=%llu path=%s status=%d\", REC->id, __get_str(path), REC->status\n");
}

TEST_F(TracepointTest, FiringWritesTheRecordExactly) {
  pmu::tracepoint_define(kRequestId, "tptest:request");
  ThreadTracepointEvent ev(kRequestId);
  ASSERT_GE(ev.fd, 0);
  ASSERT_TRUE(ev.ring.ok());
  ASSERT_TRUE(userperf_trace_enabled(tptest, request));
  userperf_trace(tptest, request, 5, "/x", -1);
  const auto samples = ev.samples();
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].pid, static_cast<std::uint32_t>(getpid()));
  EXPECT_EQ(samples[0].tid, static_cast<std::uint32_t>(gettid()));
  Bytes expected;
  expected.common(kRequestId, gettid())
      .put<std::uint64_t>(5)
      .put<std::uint32_t>(data_loc(3, 24))
      .put<std::int32_t>(-1)
      .text("/x", 3);
  EXPECT_EQ(samples[0].raw, expected.padded());
}

TEST_F(TracepointTest, DisabledAgainWhenTheLastEventCloses) {
  pmu::tracepoint_define(kRequestId, "tptest:request");
  {
    ThreadTracepointEvent ev(kRequestId);
    ASSERT_GE(ev.fd, 0);
    ThreadTracepointEvent second(kRequestId);
    ASSERT_GE(second.fd, 0);
    // Both events of this thread get the record.
    userperf_trace(tptest, request, 1, "", 0);
    EXPECT_EQ(ev.samples().size(), 1u);
    EXPECT_EQ(second.samples().size(), 1u);
    ev.close();
    EXPECT_TRUE(userperf_trace_enabled(tptest, request));
  }
  EXPECT_FALSE(userperf_trace_enabled(tptest, request));
}

TEST_F(TracepointTest, StringsAndByteArrays) {
  pmu::tracepoint_define(kBlobId, "tptest:blob");
  EXPECT_NE(FormatLog::instance().of(kBlobId).at(0).find(
                "\tfield:__data_loc u8[] payload;\toffset:12;\tsize:4;\tsigned:0;\n"),
            std::string::npos);
  EXPECT_NE(FormatLog::instance().of(kBlobId).at(0).find(
                "print fmt: \"tag=%hhu payload=%s small=%hd\", REC->tag, "
                "__print_hex(__get_dynamic_array(payload), __get_dynamic_array_len(payload)), "
                "REC->small\n"),
            std::string::npos);
  ThreadTracepointEvent ev(kBlobId);
  ASSERT_GE(ev.fd, 0);
  const std::uint8_t bytes[] = {1, 2, 3, 4, 5};
  userperf_trace(tptest, blob, 7, (userperf_bytes{bytes, sizeof bytes}), -2);
  userperf_trace(tptest, blob, 8, (userperf_bytes{nullptr, 0}), 3);
  const auto samples = ev.samples();
  ASSERT_EQ(samples.size(), 2u);
  // tag u8 @8, payload loc @12 (aligned to 4), small s16 @16; fixed part 20 (aligned to 4).
  Bytes first;
  first.common(kBlobId, gettid())
      .put<std::uint8_t>(7)
      .put<std::uint8_t>(0)
      .put<std::uint16_t>(0)
      .put<std::uint32_t>(data_loc(5, 20))
      .put<std::int16_t>(-2)
      .put<std::uint16_t>(0)
      .text(reinterpret_cast<const char*>(bytes), 5);
  EXPECT_EQ(samples[0].raw, first.padded());
  Bytes empty;
  empty.common(kBlobId, gettid())
      .put<std::uint8_t>(8)
      .put<std::uint8_t>(0)
      .put<std::uint16_t>(0)
      .put<std::uint32_t>(data_loc(0, 20))
      .put<std::int16_t>(3)
      .put<std::uint16_t>(0);
  EXPECT_EQ(samples[1].raw, empty.padded());
}

// A record's fixed part is stored field by field straight into the ring; where it straddles the
// ring's end it is built on the stack and each side copied. Fired until the fixed part has been
// split at both places a 4-page ring allows (it starts 4 bytes past a multiple of 8), every record
// is byte for byte the one expected, padding zeroed.
TEST_F(TracepointTest, RecordsAcrossTheRingsEndAreExact) {
  pmu::tracepoint_define(kBlobId, "tptest:blob");
  ThreadTracepointEvent ev(kBlobId);
  ASSERT_GE(ev.fd, 0);
  const std::uint64_t data_size = 4 * 4096;
  constexpr std::uint64_t kFixedAt = 8 + 8 + 4;  // header, TID, the RAW size
  constexpr std::uint64_t kFixedSize = 20;
  std::uint8_t payload[23];
  for (std::size_t i = 0; i < sizeof payload; ++i) payload[i] = static_cast<std::uint8_t>(0xa0 + i);
  std::vector<std::uint64_t> splits_seen;
  for (int i = 0; i < 20000 && splits_seen.size() < 2; ++i) {
    const std::uint64_t head =
        std::atomic_ref<__u64>(ev.ring.control()->data_head).load(std::memory_order_acquire);
    const std::uint64_t at = (head + kFixedAt) % data_size;
    const std::size_t len = static_cast<std::size_t>(i % 23);
    userperf_trace(tptest, blob, static_cast<std::uint8_t>(i), (userperf_bytes{payload, len}),
                   static_cast<std::int16_t>(-i));
    const auto samples = ev.samples();
    ASSERT_EQ(samples.size(), 1u);
    Bytes expected;
    expected.common(kBlobId, gettid())
        .put<std::uint8_t>(static_cast<std::uint8_t>(i))
        .put<std::uint8_t>(0)
        .put<std::uint16_t>(0)
        .put<std::uint32_t>(data_loc(static_cast<std::uint32_t>(len), 20))
        .put<std::int16_t>(static_cast<std::int16_t>(-i))
        .put<std::uint16_t>(0)
        .text(reinterpret_cast<const char*>(payload), len);
    ASSERT_EQ(samples[0].raw, expected.padded()) << "fire " << i << " at ring offset " << at;
    if (at + kFixedSize > data_size) {
      const std::uint64_t split = data_size - at;
      if (std::find(splits_seen.begin(), splits_seen.end(), split) == splits_seen.end()) {
        splits_seen.push_back(split);
      }
    }
  }
  EXPECT_EQ(splits_seen.size(), 2u) << "the fixed part never straddled the ring's end both ways";
}

TEST_F(TracepointTest, NullStringRecordsNullAndLongStringsFit) {
  pmu::tracepoint_define(kRequestId, "tptest:request");
  ThreadTracepointEvent ev(kRequestId);
  ASSERT_GE(ev.fd, 0);
  userperf_trace(tptest, request, 2, nullptr, 0);
  const std::string long_path(3000, 'p');
  userperf_trace(tptest, request, 3, long_path.c_str(), 0);
  const auto samples = ev.samples();
  ASSERT_EQ(samples.size(), 2u);
  Bytes null_record;
  null_record.common(kRequestId, gettid())
      .put<std::uint64_t>(2)
      .put<std::uint32_t>(data_loc(7, 24))
      .put<std::int32_t>(0)
      .text("(null)", 7);
  EXPECT_EQ(samples[0].raw, null_record.padded());
  ASSERT_GE(samples[1].raw.size(), 24u + 3001u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(samples[1].raw.data()) + 24), long_path);
}

TEST_F(TracepointTest, RecordsBeyondTheSampleLimitAreLostNotCorrupt) {
  pmu::tracepoint_define(kRequestId, "tptest:request");
  ThreadTracepointEvent ev(kRequestId);
  ASSERT_GE(ev.fd, 0);
  const std::string huge(70000, 'h');
  userperf_trace(tptest, request, 4, huge.c_str(), 0);
  userperf_trace(tptest, request, 5, "ok", 0);
  const auto samples = ev.samples();
  ASSERT_EQ(samples.size(), 1u);  // the huge one was refused
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(samples[0].raw.data()) + 24), "ok");
  // ... and counted, so that the ring's next LOST record reports it.
  EXPECT_EQ(api::engine().event(ev.fd)->lost_samples.load(), 1u);
}

TEST_F(TracepointTest, SamplePeriodCountsFirings) {
  pmu::tracepoint_define(kPeriodicId, "tptest:periodic");
  perf_event_attr attr = tracepoint_attr(kPeriodicId);
  attr.sample_period = 3;
  const int fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 7; ++i) userperf_trace(tptest, periodic, i);
  std::uint64_t count = 0;
  ASSERT_EQ(userperf_read(fd, &count, sizeof count), static_cast<ssize_t>(sizeof count));
  EXPECT_EQ(count, 7u);
  userperf_close(fd);
}

TEST_F(TracepointTest, LateRegistrationBindsToAnEarlierDefinition) {
  // A descriptor registered after its name was defined and its events opened (a dlopen'ed
  // object's constructor): bound at registration, enabled at once, its format reported then.
  static const userperf_tp_field fields[] = {{"value", USERPERF_TP_U32}};
  static userperf_tracepoint late = {0, USERPERF_TP_ABI_VERSION, "tptest", "late", 1, fields, 0};
  pmu::tracepoint_define(kLateId, "tptest:late");
  EXPECT_TRUE(FormatLog::instance().of(kLateId).empty());
  ThreadTracepointEvent ev(kLateId);
  ASSERT_GE(ev.fd, 0);
  ASSERT_EQ(userperf_tracepoint_register(&late), 0);
  ASSERT_EQ(userperf_tracepoint_register(&late), 0);  // again: no second binding
  EXPECT_EQ(late.enabled, 1);
  EXPECT_EQ(FormatLog::instance().of(kLateId).size(), 1u);
  const std::uint32_t value = 77;
  const void* const args[] = {&value};
  userperf_tracepoint_fire(&late, args, nullptr);
  auto samples = ev.samples();
  ASSERT_EQ(samples.size(), 1u);
  Bytes expected;
  expected.common(kLateId, gettid()).put<std::uint32_t>(77);
  EXPECT_EQ(samples[0].raw, expected.padded());

  userperf_tracepoint_unregister(&late);  // the object is unloaded
  EXPECT_EQ(late.enabled, 0);
  EXPECT_EQ(late.library_slot, 0u);
  userperf_tracepoint_fire(&late, args, nullptr);
  EXPECT_TRUE(ev.samples().empty());
}

TEST_F(TracepointTest, EachThreadSeesOnlyItsOwnRecords) {
  pmu::tracepoint_define(kThreadsId, "tptest:threads");
  constexpr int kFirings = 100;
  std::atomic<int> opened{0};
  std::vector<std::string> failures(2);
  auto worker = [&](std::uint32_t value, std::string& failure) {
    ThreadTracepointEvent ev(kThreadsId);
    opened.fetch_add(1);
    while (opened.load() < 2) std::this_thread::yield();  // both events exist while firing
    for (int i = 0; i < kFirings; ++i) userperf_trace(tptest, threads, value);
    const auto samples = ev.samples();
    if (ev.fd < 0 || samples.size() != kFirings) {
      failure = "fd " + std::to_string(ev.fd) + ", " + std::to_string(samples.size()) + " samples";
      return;
    }
    for (const auto& s : samples) {
      std::uint32_t recorded = 0;
      std::memcpy(&recorded, s.raw.data() + 8, sizeof recorded);
      if (s.tid != static_cast<std::uint32_t>(gettid()) || recorded != value) {
        failure = "a record of another thread: value " + std::to_string(recorded);
        return;
      }
    }
  };
  std::thread a(worker, 1, std::ref(failures[0]));
  std::thread b(worker, 2, std::ref(failures[1]));
  a.join();
  b.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}

// A thread's lookup of its event is cached per thread; the cache must follow the events: a
// second event of the same thread (both get every hit), the first one closed (only the second),
// a fork child, whose thread has another id and so no event: its hits reach no ring, its
// parent's included (which shares the ring's memory); and every event closed.
TEST_F(TracepointTest, ThreadLookupsFollowOpenCloseAndFork) {
  pmu::tracepoint_define(kThreadsId, "tptest:threads");
  auto values = [](const std::vector<ThreadTracepointEvent::Sample>& samples) {
    std::vector<std::uint32_t> out;
    for (const auto& s : samples) {
      std::uint32_t v = 0;
      std::memcpy(&v, s.raw.data() + 8, sizeof v);
      out.push_back(v);
    }
    return out;
  };
  ThreadTracepointEvent first(kThreadsId);
  ASSERT_GE(first.fd, 0);
  userperf_trace(tptest, threads, 1);  // cached: one event
  {
    ThreadTracepointEvent second(kThreadsId);
    ASSERT_GE(second.fd, 0);
    userperf_trace(tptest, threads, 2);  // both
    EXPECT_EQ(values(second.samples()), (std::vector<std::uint32_t>{2}));
    EXPECT_EQ(values(first.samples()), (std::vector<std::uint32_t>{1, 2}));
    first.close();
    userperf_trace(tptest, threads, 3);  // the second only
    EXPECT_EQ(values(second.samples()), (std::vector<std::uint32_t>{3}));
    const pid_t child = fork();
    if (child == 0) {
      for (std::uint32_t i = 0; i < 10; ++i) userperf_trace(tptest, threads, 100 + i);
      _exit(0);
    }
    ASSERT_GT(child, 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(values(second.samples()), std::vector<std::uint32_t>{}) << "the child's hits";
    userperf_trace(tptest, threads, 4);
    EXPECT_EQ(values(second.samples()), (std::vector<std::uint32_t>{4}));
  }
  // The cached event was closed and freed: a hit now must not reach it (ASan sees a use after
  // free if it does).
  userperf_trace(tptest, threads, 5);
  ThreadTracepointEvent third(kThreadsId);
  ASSERT_GE(third.fd, 0);
  userperf_trace(tptest, threads, 6);
  EXPECT_EQ(values(third.samples()), (std::vector<std::uint32_t>{6}));
}

TEST_F(TracepointTest, CpuWideAndBranchSamplingAreRefused) {
  pmu::tracepoint_define(kRequestId, "tptest:request");
  perf_event_attr attr = tracepoint_attr(kRequestId);
  EXPECT_EQ(userperf_perf_event_open(&attr, -1, 0, -1, 0), -1);
  EXPECT_EQ(errno, EOPNOTSUPP);
  attr.sample_type |= PERF_SAMPLE_BRANCH_STACK;
  attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER;
  EXPECT_EQ(userperf_perf_event_open(&attr, 0, -1, -1, 0), -1);
  EXPECT_EQ(errno, EOPNOTSUPP);
}

std::string check(const userperf_tracepoint& tp) {
  char why[256] = "";
  errno = 0;
  const int rc = userperf_tracepoint_check(&tp, why, sizeof why);
  return rc == 0 ? std::string("ok")
                 : std::to_string(rc) + " errno " + std::to_string(errno) + " " + why;
}

TEST_F(TracepointTest, BadDescriptorsAreRefusedWithAReason) {
  std::vector<userperf_tp_field> many(17, {"f", USERPERF_TP_U8});
  std::vector<std::string> names;
  for (int i = 0; i < 17; ++i) names.push_back("f" + std::to_string(i));
  for (int i = 0; i < 17; ++i) many[i].name = names[i].c_str();
  userperf_tracepoint too_many = {0, USERPERF_TP_ABI_VERSION, "bad", "many", 17, many.data(), 0};
  EXPECT_EQ(check(too_many), "-1 errno 22 bad:many: 17 fields, at most 16");
  EXPECT_EQ(userperf_tracepoint_register(&too_many), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(too_many.library_slot, 0u);

  const std::string long_name(64, 'n');
  userperf_tracepoint too_long = {
      0, USERPERF_TP_ABI_VERSION, "bad", long_name.c_str(), 1, many.data(), 0};
  EXPECT_EQ(check(too_long),
            "-1 errno 22 name \"nnnnnnnnnnnnnnnn...\" is 64 characters long, at most 63");
  EXPECT_EQ(userperf_tracepoint_register(&too_long), -1);
  EXPECT_EQ(errno, EINVAL);

  userperf_tracepoint not_identifier = {0, USERPERF_TP_ABI_VERSION, "bad", "a-b", 1, many.data(),
                                        0};
  EXPECT_EQ(check(not_identifier), "-1 errno 22 name \"a-b\" is not a C identifier");

  const userperf_tp_field unknown_kind[] = {{"x", 42}};
  userperf_tracepoint bad_kind = {0, USERPERF_TP_ABI_VERSION, "bad", "kind", 1, unknown_kind, 0};
  EXPECT_EQ(check(bad_kind), "-1 errno 22 bad:kind: field x has unknown kind 42");

  const userperf_tp_field twice[] = {{"x", USERPERF_TP_U8}, {"x", USERPERF_TP_U8}};
  userperf_tracepoint dup = {0, USERPERF_TP_ABI_VERSION, "bad", "dup", 2, twice, 0};
  EXPECT_EQ(check(dup), "-1 errno 22 bad:dup: field x appears twice");

  userperf_tracepoint old_abi = {0, 99, "bad", "abi", 1, many.data(), 0};
  EXPECT_EQ(check(old_abi), "-1 errno 22 descriptor ABI version 99, this library knows 1");
  EXPECT_EQ(check(userperf_tp_tptest_request), "ok");
}

TEST_F(TracepointTest, SameNameWithOtherFieldsIsRefused) {
  static const userperf_tp_field other[] = {{"id", USERPERF_TP_U32}};
  userperf_tracepoint clash = {0, USERPERF_TP_ABI_VERSION, "tptest", "request", 1, other, 0};
  EXPECT_EQ(userperf_tracepoint_register(&clash), -1);
  EXPECT_EQ(errno, EEXIST);
  EXPECT_EQ(clash.library_slot, 0u);
}

TEST_F(TracepointTest, OtherFieldsAreRefusedAfterEveryDescriptorWasUnloaded) {
  // The first bound descriptor fixes the name's layout and the format reported: a library loaded
  // after the first one was unloaded (dlclose) must not bring other fields, even with no peer
  // left to disagree with. Its string would be read from the u64 argument as a pointer.
  static const userperf_tp_field number[] = {{"value", USERPERF_TP_U64}};
  static const userperf_tp_field text[] = {{"value", USERPERF_TP_STRING}};
  userperf_tracepoint first = {0, USERPERF_TP_ABI_VERSION, "tptest", "reloaded", 1, number, 0};
  userperf_tracepoint changed = {0, USERPERF_TP_ABI_VERSION, "tptest", "reloaded", 1, text, 0};
  userperf_tracepoint reloaded = {0, USERPERF_TP_ABI_VERSION, "tptest", "reloaded", 1, number, 0};
  pmu::tracepoint_define(kReloadedId, "tptest:reloaded");
  ThreadTracepointEvent ev(kReloadedId);
  ASSERT_GE(ev.fd, 0);
  ASSERT_EQ(userperf_tracepoint_register(&first), 0);
  userperf_tracepoint_unregister(&first);

  EXPECT_EQ(userperf_tracepoint_register(&changed), -1);
  EXPECT_EQ(errno, EEXIST);
  EXPECT_EQ(changed.library_slot, 0u);
  EXPECT_EQ(changed.enabled, 0);
  userperf_tracepoint_unregister(&changed);  // in case it was accepted

  // The same fields again (the library reloaded) bind and record with the first layout.
  ASSERT_EQ(userperf_tracepoint_register(&reloaded), 0);
  EXPECT_EQ(reloaded.enabled, 1);
  const std::uint64_t value = 0x1234;
  const void* const args[] = {&value};
  userperf_tracepoint_fire(&reloaded, args, nullptr);
  const auto samples = ev.samples();
  ASSERT_EQ(samples.size(), 1u);
  Bytes expected;
  expected.common(kReloadedId, gettid()).put<std::uint64_t>(0x1234);
  EXPECT_EQ(samples[0].raw, expected.padded());
  EXPECT_EQ(FormatLog::instance().of(kReloadedId).size(), 1u);
  userperf_tracepoint_unregister(&reloaded);
}

TEST(TracepointHeader, OffPathIsOneLoadAndABranch) {
  // The kinds the C++ trait derives from types.
  static_assert(USERPERF_TP_KIND(bool) == USERPERF_TP_U8);
  static_assert(USERPERF_TP_KIND(char) == USERPERF_TP_S8);
  static_assert(USERPERF_TP_KIND(unsigned short) == USERPERF_TP_U16);
  static_assert(USERPERF_TP_KIND(long) == USERPERF_TP_S64);
  static_assert(USERPERF_TP_KIND(unsigned long long) == USERPERF_TP_U64);
  static_assert(USERPERF_TP_KIND(const char*) == USERPERF_TP_STRING);
  static_assert(USERPERF_TP_KIND(userperf_bytes) == USERPERF_TP_BYTES);
  EXPECT_EQ(userperf_tp_tptest_request.nr_fields, 3u);
  EXPECT_STREQ(userperf_tp_tptest_request.fields[1].name, "path");
  EXPECT_EQ(userperf_tp_tptest_request.fields[1].kind,
            static_cast<std::uint32_t>(USERPERF_TP_STRING));
}

}  // namespace
}  // namespace userperf::testing
