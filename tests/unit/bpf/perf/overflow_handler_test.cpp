// End to end: clang-compiled perf_event programs loaded through the C API, attached with
// PERF_EVENT_IOC_SET_BPF to test-PMU events, run at each overflow.
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>

#include "bpf/perf/bpf_overflow_handler.hpp"
#include "support/test_events.hpp"
#include "support/thread_signal_timer.hpp"
#include "userperf/userperf.h"

namespace userperf::testing {
namespace {

std::string object_path(const char* name) {
  return std::string(USERPERF_BPF_OBJECT_DIR) + "/progs/" + name + ".bpf.o";
}

// A loaded program descriptor, closed at the end of the test.
struct Program {
  int fd = -1;
  std::string log;
  Program(const char* object, const char* name) {
    char buf[16384] = {};
    fd = userperf_bpf_prog_load(object_path(object).c_str(), name, buf, sizeof buf);
    log = buf;
  }
  ~Program() {
    if (fd >= 0) userperf_close(fd);
  }
  int map(const char* name) const { return userperf_bpf_map_fd(fd, name); }
};

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) userperf_close(fd);
  }
};

std::uint64_t array_value(int map_fd, std::uint32_t key) {
  std::uint64_t value = ~0ull;
  EXPECT_EQ(userperf_bpf_map_lookup_elem(map_fd, &key, &value), 0) << strerror(errno);
  return value;
}

void set_array_value(int map_fd, std::uint32_t key, std::uint64_t value) {
  ASSERT_EQ(userperf_bpf_map_update_elem(map_fd, &key, &value, BPF_ANY), 0) << strerror(errno);
}

std::uint32_t this_tid() {
  return static_cast<std::uint32_t>(syscall(SYS_gettid));
}

core::SampleData sample_with(std::uint64_t addr, std::uint64_t ip = 0x401000) {
  core::SampleData data;
  data.addr = addr;
  data.ip = ip;
  data.pid = static_cast<std::uint32_t>(getpid());
  data.tid = this_tid();
  return data;
}

// A BPF_OUTPUT event of this thread with its own ring.
// PERF_EVENT_IOC_SET_BPF of `prog_fd` on the event, then ENABLE.
::testing::AssertionResult attach_and_enable(int event_fd, int prog_fd) {
  if (userperf_ioctl(event_fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog_fd)) != 0) {
    return ::testing::AssertionFailure() << "SET_BPF: " << strerror(errno);
  }
  if (userperf_ioctl(event_fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    return ::testing::AssertionFailure() << "ENABLE: " << strerror(errno);
  }
  return ::testing::AssertionSuccess();
}

struct OutputEvent {
  Fd fd;
  MappedRing ring;
  static int open_event() {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_BPF_OUTPUT;
    attr.sample_period = 1;
    attr.sample_type = PERF_SAMPLE_RAW;
    return userperf_perf_event_open(&attr, 0, -1, -1, 0);
  }
  OutputEvent() : fd(open_event()), ring(fd.fd, 1) {}
};

TEST(OverflowHandler, FilterKeepsAndDropsSamplesAndCountsThem) {
  Program prog("handler_filter", "filter");
  ASSERT_GE(prog.fd, 0) << strerror(errno) << "\n" << prog.log;
  perf_event_attr attr = test_attr(PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(event.fd, 0);
  MappedRing ring(event.fd, 1);
  ASSERT_TRUE(ring.ok());
  ASSERT_TRUE(attach_and_enable(event.fd, prog.fd));

  const std::uint64_t addrs[] = {0x10, 0x2000, 0xfff, 0x1000, 0x3333};
  for (std::uint64_t addr : addrs) fire(event.fd, 1, sample_with(addr));

  const auto records = ring.drain();
  std::vector<std::uint64_t> kept;
  for (const auto& rec : records) {
    ASSERT_EQ(record_type(rec), PERF_RECORD_SAMPLE);
    kept.push_back(field_at<std::uint64_t>(rec, 8 + 8));  // ip, addr, period
  }
  EXPECT_EQ(kept, (std::vector<std::uint64_t>{0x2000, 0x1000, 0x3333}));
  const Fd counts(prog.map("counts"));
  ASSERT_GE(counts.fd, 0);
  EXPECT_EQ(array_value(counts.fd, 0), 3u);
  EXPECT_EQ(array_value(counts.fd, 1), 2u);
}

TEST(OverflowHandler, DroppedSampleSkipsTheRefreshCount) {
  Program prog("handler_filter", "filter");
  ASSERT_GE(prog.fd, 0) << prog.log;
  perf_event_attr attr = test_attr(PERF_SAMPLE_ADDR);
  attr.disabled = 1;
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  MappedRing ring(event.fd, 1);
  ASSERT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog.fd)),
            0);
  ASSERT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_REFRESH, 2), 0);
  // Two dropped overflows do not use up the two allowed by REFRESH; the next two are written.
  fire(event.fd, 1, sample_with(0x1));
  fire(event.fd, 1, sample_with(0x2));
  fire(event.fd, 1, sample_with(0x5000));
  fire(event.fd, 1, sample_with(0x6000));
  fire(event.fd, 1, sample_with(0x7000));  // the event stopped after the second written sample
  EXPECT_EQ(ring.drain().size(), 2u);
}

TEST(OverflowHandler, PerfEventOutputWritesARawSampleToTheCurrentCpuSlot) {
  Program prog("handler_filter", "filter");
  ASSERT_GE(prog.fd, 0) << prog.log;
  OutputEvent out;
  ASSERT_GE(out.fd.fd, 0) << strerror(errno);
  ASSERT_TRUE(out.ring.ok());
  const Fd events(prog.map("events"));
  ASSERT_GE(events.fd, 0);
  // One slot per possible CPU, each holding this thread's output event.
  for (std::uint32_t cpu = 0;; ++cpu) {
    const std::uint32_t value = static_cast<std::uint32_t>(out.fd.fd);
    if (userperf_bpf_map_update_elem(events.fd, &cpu, &value, BPF_ANY) != 0) {
      EXPECT_EQ(errno, E2BIG);
      ASSERT_GT(cpu, 0u);
      break;
    }
  }
  perf_event_attr attr = test_attr(PERF_SAMPLE_ADDR);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  MappedRing ring(event.fd, 1);
  ASSERT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog.fd)),
            0);
  fire(event.fd, 7, sample_with(0x5042, 0x401234));  // period 1: 7 overflows, all reported
  fire(event.fd, 1, sample_with(0x5043));            // kept, not reported

  EXPECT_EQ(ring.drain().size(), 8u);  // both outputs: the program's and the normal sample
  const auto records = out.ring.drain();
  ASSERT_EQ(records.size(), 7u);
  for (const auto& rec : records) {
    ASSERT_EQ(record_type(rec), PERF_RECORD_SAMPLE);
    // RAW: u32 size (24 bytes + 4 of padding), then {period, addr, ip}.
    EXPECT_EQ(rec.size(), 8u + 4 + 28);
    EXPECT_EQ(field_at<std::uint32_t>(rec, 8), 28u);
    EXPECT_EQ(field_at<std::uint64_t>(rec, 12), 1u);
    EXPECT_EQ(field_at<std::uint64_t>(rec, 20), 0x5042u);
  }
}

TEST(OverflowHandler, PerfEventOutputReturnsTheKernelsErrors) {
  Program prog("handler_helpers", "output");
  ASSERT_GE(prog.fd, 0) << strerror(errno) << "\n" << prog.log;
  const Fd config(prog.map("config"));
  const Fd results(prog.map("results"));
  const Fd outputs(prog.map("outputs"));
  ASSERT_GE(outputs.fd, 0);
  OutputEvent out;
  perf_event_attr not_output_attr = test_attr(PERF_SAMPLE_RAW);
  Fd not_output(userperf_perf_event_open(&not_output_attr, 0, -1, -1, 0));
  const std::uint32_t slot0 = 0;
  const std::uint32_t slot1 = 1;
  const auto out_fd = static_cast<std::uint32_t>(out.fd.fd);
  const auto wrong_fd = static_cast<std::uint32_t>(not_output.fd);
  ASSERT_EQ(userperf_bpf_map_update_elem(outputs.fd, &slot0, &out_fd, BPF_ANY), 0);
  ASSERT_EQ(userperf_bpf_map_update_elem(outputs.fd, &slot1, &wrong_fd, BPF_ANY), 0);

  perf_event_attr attr = test_attr(0);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog.fd)),
            0);
  auto output_with_flags = [&](std::uint64_t flags) {
    set_array_value(config.fd, 0, flags);
    fire(event.fd, 1, sample_with(0));
    return static_cast<std::int64_t>(array_value(results.fd, 0));
  };
  EXPECT_EQ(output_with_flags(0), 0);
  EXPECT_EQ(output_with_flags(1), -EINVAL);           // not a BPF_OUTPUT event
  EXPECT_EQ(output_with_flags(2), -ENOENT);           // empty slot
  EXPECT_EQ(output_with_flags(4), -E2BIG);            // past max_entries
  EXPECT_EQ(output_with_flags(1ull << 32), -EINVAL);  // flags outside BPF_F_INDEX_MASK

  // A full ring: -ENOSPC, then a LOST record once there is room.
  int written = 1;
  std::int64_t rc = 0;
  while ((rc = output_with_flags(0)) == 0) ++written;
  EXPECT_EQ(rc, -ENOSPC);
  const std::uint64_t failed = 1 + (output_with_flags(0) == -ENOSPC ? 1 : 0);
  auto records = out.ring.drain();
  EXPECT_EQ(static_cast<int>(records.size()), written);
  // RAW of 5 bytes: u32 size 12 (5 + 7 padding), record 8 + 16 bytes.
  EXPECT_EQ(records.front().size(), 24u);
  EXPECT_EQ(field_at<std::uint32_t>(records.front(), 8), 12u);
  EXPECT_EQ(output_with_flags(0), 0);
  records = out.ring.drain();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(record_type(records[0]), PERF_RECORD_LOST);
  EXPECT_EQ(field_at<std::uint64_t>(records[0], 16), failed);
  EXPECT_EQ(record_type(records[1]), PERF_RECORD_SAMPLE);
}

TEST(OverflowHandler, PerfEventArrayKeepsAClosedEventAlive) {
  Program prog("handler_helpers", "output");
  ASSERT_GE(prog.fd, 0) << prog.log;
  const Fd config(prog.map("config"));
  const Fd results(prog.map("results"));
  const Fd outputs(prog.map("outputs"));
  const int out_fd = OutputEvent::open_event();
  ASSERT_GE(out_fd, 0);
  MappedRing out_ring(out_fd, 1);
  ASSERT_TRUE(out_ring.ok());
  const std::uint32_t slot = 0;
  const auto value = static_cast<std::uint32_t>(out_fd);
  ASSERT_EQ(userperf_bpf_map_update_elem(outputs.fd, &slot, &value, BPF_ANY), 0);
  // The map holds the event, as the kernel's map holds its file: closing the descriptor leaves
  // it writing into the ring that is still mapped.
  ASSERT_EQ(userperf_close(out_fd), 0);
  perf_event_attr attr = test_attr(0);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog.fd)),
            0);
  set_array_value(config.fd, 0, 0);
  fire(event.fd, 1, sample_with(0));
  EXPECT_EQ(array_value(results.fd, 0), 0u);
  EXPECT_EQ(out_ring.drain().size(), 1u);
  // Deleting the slot drops the last reference: the event is gone, the slot empty.
  ASSERT_EQ(userperf_bpf_map_delete_elem(outputs.fd, &slot), 0);
  fire(event.fd, 1, sample_with(0));
  EXPECT_EQ(static_cast<std::int64_t>(array_value(results.fd, 0)), -ENOENT);
  EXPECT_EQ(out_ring.drain().size(), 0u);
}

TEST(OverflowHandler, StacksComeFromTheSamplesUserCallchain) {
  Program prog("handler_helpers", "stacks_prog");
  ASSERT_GE(prog.fd, 0) << prog.log;
  const Fd config(prog.map("config"));
  const Fd results(prog.map("results"));
  const Fd stacks(prog.map("stacks"));
  perf_event_attr attr = test_attr(PERF_SAMPLE_CALLCHAIN);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog.fd)),
            0);
  const std::uint64_t chain[] = {PERF_CONTEXT_USER, 0x401000, 0x402000, 0x403000};
  core::SampleData data = sample_with(0);
  core::SampleExtras extras;
  extras.callchain = chain;
  extras.callchain_nr = 4;
  data.extras = &extras;

  fire(event.fd, 1, data);
  const auto id = static_cast<std::int64_t>(array_value(results.fd, 0));
  ASSERT_GE(id, 0);
  EXPECT_EQ(static_cast<std::int64_t>(array_value(results.fd, 1)), 24);  // 3 ips of the 4 asked
  EXPECT_EQ(array_value(results.fd, 2), 0x401000u);
  EXPECT_EQ(array_value(results.fd, 3), 0x402000u);
  EXPECT_EQ(static_cast<std::int64_t>(array_value(results.fd, 4)), -EFAULT);  // no kernel part
  std::uint64_t stored[16] = {};
  const auto key = static_cast<std::uint32_t>(id);
  ASSERT_EQ(userperf_bpf_map_lookup_elem(stacks.fd, &key, stored), 0) << strerror(errno);
  EXPECT_EQ(stored[0], 0x401000u);
  EXPECT_EQ(stored[2], 0x403000u);
  EXPECT_EQ(stored[3], 0u);

  set_array_value(config.fd, 0, 3);  // skip all three entries: no trace
  fire(event.fd, 1, data);
  EXPECT_EQ(static_cast<std::int64_t>(array_value(results.fd, 0)), -EFAULT);
}

TEST(OverflowHandler, ReadValueReportsTheOverflowingEvent) {
  Program prog("handler_helpers", "read_value");
  ASSERT_GE(prog.fd, 0) << prog.log;
  const Fd results(prog.map("results"));
  perf_event_attr attr = test_attr(0, 10);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog.fd)),
            0);
  fire(event.fd, 25, sample_with(0));  // two overflows; the program reads the count at each
  std::uint64_t count = 0;
  ASSERT_EQ(userperf_read(event.fd, &count, sizeof count), static_cast<ssize_t>(sizeof count));
  EXPECT_EQ(count, 25u);
  EXPECT_EQ(array_value(results.fd, 0), 0u);
  EXPECT_EQ(array_value(results.fd, 1), count);
  EXPECT_GT(array_value(results.fd, 2), 0u);
  EXPECT_GT(array_value(results.fd, 3), 0u);
  EXPECT_EQ(static_cast<std::int64_t>(array_value(results.fd, 4)), -EINVAL);
}

TEST(OverflowHandler, TaskAndMemoryHelpers) {
  Program prog("handler_helpers", "task_and_memory");
  ASSERT_GE(prog.fd, 0) << prog.log;
  const Fd config(prog.map("config"));
  const Fd results(prog.map("results"));
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  userperf_bpf_set_trace_fd(pipe_fds[1]);
  static const std::uint64_t secret = 0x1122334455667788;
  set_array_value(config.fd, 0, reinterpret_cast<std::uintptr_t>(&secret));
  perf_event_attr attr = test_attr(0);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog.fd)),
            0);
  fire(event.fd, 1, sample_with(0xabc));
  userperf_bpf_set_trace_fd(STDERR_FILENO);

  EXPECT_EQ(array_value(results.fd, 0), 0u);
  EXPECT_EQ(array_value(results.fd, 1), secret);
  EXPECT_EQ(static_cast<std::int64_t>(array_value(results.fd, 2)), -EFAULT);
  EXPECT_EQ(array_value(results.fd, 3), (static_cast<std::uint64_t>(getpid()) << 32) | this_tid());
  char line[256] = {};
  ASSERT_GT(read(pipe_fds[0], line, sizeof line - 1), 0);
  EXPECT_NE(std::string(line).find(": bpf_trace_printk: period 1 addr abc\n"), std::string::npos)
      << line;
  EXPECT_EQ(array_value(results.fd, 4), std::strlen("period 1 addr abc"));
  char comm[16] = {};
  pthread_getname_np(pthread_self(), comm, sizeof comm);
  std::uint64_t comm_head = 0;
  std::memcpy(&comm_head, comm, sizeof comm_head);
  EXPECT_EQ(array_value(results.fd, 5), comm_head);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

TEST(OverflowHandler, SetBpfErrorsAsTheKernel) {
  Program prog("handler_filter", "filter");
  ASSERT_GE(prog.fd, 0) << prog.log;
  perf_event_attr attr = test_attr(0);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  Fd other(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  errno = 0;
  EXPECT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(other.fd)),
            -1);
  EXPECT_EQ(errno, EINVAL);  // a descriptor, but no program
  EXPECT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, 100000), -1);
  EXPECT_EQ(errno, EBADF);
  ASSERT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog.fd)),
            0);
  EXPECT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog.fd)),
            -1);
  EXPECT_EQ(errno, EEXIST);
}

TEST(OverflowHandler, ProgramOutlivesItsDescriptorWhileAttached) {
  perf_event_attr attr = test_attr(PERF_SAMPLE_ADDR);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  MappedRing ring(event.fd, 1);
  {
    Program prog("handler_filter", "filter");
    ASSERT_GE(prog.fd, 0) << prog.log;
    ASSERT_EQ(userperf_ioctl(event.fd, PERF_EVENT_IOC_SET_BPF, static_cast<unsigned long>(prog.fd)),
              0);
  }
  fire(event.fd, 1, sample_with(0x1));
  fire(event.fd, 1, sample_with(0x2000));
  EXPECT_EQ(ring.drain().size(), 1u);
}

TEST(OverflowHandler, RejectedProgramGivesTheVerifierLog) {
  Program prog("handler_rejected", nullptr);
  EXPECT_EQ(prog.fd, -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_NE(prog.log.find("invalid mem access 'map_value_or_null'"), std::string::npos) << prog.log;
  Program missing("handler_filter", "no_such_program");
  EXPECT_EQ(missing.fd, -1);
  EXPECT_EQ(errno, ENOENT);
  char log[64];
  EXPECT_EQ(userperf_bpf_prog_load("/nonexistent.bpf.o", nullptr, log, sizeof log), -1);
  EXPECT_NE(errno, 0);
}

// A PROG_ARRAY slot the object fills statically (`.values = {[1] = &target}`): loading `entry`
// loads `target` into slot 1 as libbpf's bpf_object__load does, so entry's tail call reaches it
// and the sample is kept; slot 0 stays empty.
TEST(OverflowHandler, StaticallyInitialisedSlotIsFilledAtLoad) {
  Program entry("prog_array_static_init", "entry");
  ASSERT_GE(entry.fd, 0) << strerror(errno) << "\n" << entry.log;
  const Fd jmp(entry.map("jmp"));
  ASSERT_GE(jmp.fd, 0);
  std::uint32_t key = 1;
  std::uint32_t id = 0;
  EXPECT_EQ(userperf_bpf_map_lookup_elem(jmp.fd, &key, &id), 0) << strerror(errno);
  EXPECT_NE(id, 0u);
  key = 0;
  EXPECT_EQ(userperf_bpf_map_lookup_elem(jmp.fd, &key, &id), -1);
  EXPECT_EQ(errno, ENOENT);

  perf_event_attr attr = test_attr(PERF_SAMPLE_IP);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(event.fd, 0);
  MappedRing ring(event.fd, 1);
  ASSERT_TRUE(ring.ok());
  ASSERT_TRUE(attach_and_enable(event.fd, entry.fd));
  fire(event.fd, 1, sample_with(0));
  EXPECT_EQ(ring.drain().size(), 1u);

  // Emptied from user space, the slot no longer holds target: entry's tail call falls through.
  key = 1;
  ASSERT_EQ(userperf_bpf_map_delete_elem(jmp.fd, &key), 0);
  fire(event.fd, 1, sample_with(0));
  EXPECT_TRUE(ring.drain().empty());
}

// Map-in-map on real overflows (tests/data/bpf/progs/map_in_map.bpf.c): by_slot's slot 0 holds
// counts_a from the object (static initialisation), by_addr's maps are stored from user space,
// among them a map of another object (another load of the same file), whose values the program
// reaches through the shared regions on the interpreter too. Maps that do not match the template
// are refused (EINVAL); a removed map is no longer found.
TEST(OverflowHandler, MapInMapLookupsReachInnerMaps) {
  Program prog("map_in_map", "count");
  ASSERT_GE(prog.fd, 0) << strerror(errno) << "\n" << prog.log;
  Program other("map_in_map", "count");  // a second object: its maps are its own
  ASSERT_GE(other.fd, 0) << strerror(errno) << "\n" << other.log;
  const Fd counts_a(prog.map("counts_a"));
  const Fd counts_b(prog.map("counts_b"));
  const Fd wider(prog.map("wider"));
  const Fd by_slot(prog.map("by_slot"));
  const Fd by_addr(prog.map("by_addr"));
  const Fd foreign(other.map("counts_b"));
  for (int fd : {counts_a.fd, counts_b.fd, wider.fd, by_slot.fd, by_addr.fd, foreign.fd}) {
    ASSERT_GE(fd, 0);
  }
  perf_event_attr attr = test_attr(PERF_SAMPLE_IP | PERF_SAMPLE_ADDR);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(event.fd, 0);
  MappedRing ring(event.fd, 1);
  ASSERT_TRUE(ring.ok());
  ASSERT_TRUE(attach_and_enable(event.fd, prog.fd));

  fire(event.fd, 1, sample_with(0x10));  // by_addr has no map for 0x10: dropped
  EXPECT_TRUE(ring.drain().empty());
  EXPECT_EQ(array_value(counts_a.fd, 0), 1u);

  std::uint64_t addr = 0x10;
  auto fd_value = [](const Fd& map) { return static_cast<std::uint32_t>(map.fd); };
  std::uint32_t value = fd_value(counts_b);
  ASSERT_EQ(userperf_bpf_map_update_elem(by_addr.fd, &addr, &value, BPF_ANY), 0) << strerror(errno);
  addr = 0x20;
  value = fd_value(foreign);
  ASSERT_EQ(userperf_bpf_map_update_elem(by_addr.fd, &addr, &value, BPF_ANY), 0) << strerror(errno);
  value = fd_value(wider);
  EXPECT_EQ(userperf_bpf_map_update_elem(by_addr.fd, &addr, &value, BPF_ANY), -1);
  EXPECT_EQ(errno, EINVAL);
  std::uint32_t id = 0;
  EXPECT_EQ(userperf_bpf_map_lookup_elem(by_addr.fd, &addr, &id), 0) << strerror(errno);
  EXPECT_NE(id, 0u);

  fire(event.fd, 1, sample_with(0x10));
  fire(event.fd, 1, sample_with(0x20));
  fire(event.fd, 1, sample_with(0x20));
  EXPECT_EQ(ring.drain().size(), 3u);
  EXPECT_EQ(array_value(counts_a.fd, 0), 4u);
  EXPECT_EQ(array_value(counts_b.fd, 1), 1u);
  EXPECT_EQ(array_value(foreign.fd, 1), 2u);

  // by_slot[0] now holds counts_b; by_addr loses 0x10.
  std::uint32_t slot = 0;
  value = fd_value(wider);
  EXPECT_EQ(userperf_bpf_map_update_elem(by_slot.fd, &slot, &value, BPF_ANY), -1);
  EXPECT_EQ(errno, EINVAL);
  value = fd_value(counts_b);
  ASSERT_EQ(userperf_bpf_map_update_elem(by_slot.fd, &slot, &value, BPF_ANY), 0) << strerror(errno);
  addr = 0x10;
  ASSERT_EQ(userperf_bpf_map_delete_elem(by_addr.fd, &addr), 0) << strerror(errno);
  fire(event.fd, 1, sample_with(0x10));
  EXPECT_TRUE(ring.drain().empty());
  EXPECT_EQ(array_value(counts_a.fd, 0), 4u);
  EXPECT_EQ(array_value(counts_b.fd, 0), 1u);
}

// bpf_tail_call on real overflows: `dispatch` tail-calls `walk` through the object's PROG_ARRAY,
// `walk` tail-calls itself until it has walked the wanted steps; past 33 tail calls the call
// falls through, as in the kernel.
TEST(OverflowHandler, TailCallsThroughAProgArray) {
  Program dispatch("tail_call_walk", "dispatch");
  ASSERT_GE(dispatch.fd, 0) << strerror(errno) << "\n" << dispatch.log;
  char log[4096] = {};
  const Fd walk(userperf_bpf_prog_load_from(dispatch.fd, "walk", log, sizeof log));
  ASSERT_GE(walk.fd, 0) << strerror(errno) << "\n" << log;
  EXPECT_EQ(userperf_bpf_prog_load_from(dispatch.fd, "nope", nullptr, 0), -1);
  EXPECT_EQ(errno, ENOENT);
  const Fd jmp(dispatch.map("jmp"));
  const Fd state(dispatch.map("state"));
  ASSERT_GE(jmp.fd, 0);
  ASSERT_GE(state.fd, 0);

  perf_event_attr attr = test_attr(PERF_SAMPLE_IP);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(event.fd, 0);
  MappedRing ring(event.fd, 1);
  ASSERT_TRUE(ring.ok());
  ASSERT_TRUE(attach_and_enable(event.fd, dispatch.fd));

  // Slot 1 empty: dispatch's tail call fails and it returns 0 (sample dropped).
  set_array_value(state.fd, 1, 5);
  fire(event.fd, 1, sample_with(0));
  EXPECT_EQ(array_value(state.fd, 3), 0u);
  EXPECT_TRUE(ring.drain().empty());

  std::uint32_t key = 1;
  std::uint32_t value = static_cast<std::uint32_t>(walk.fd);
  ASSERT_EQ(userperf_bpf_map_update_elem(jmp.fd, &key, &value, BPF_ANY), 0) << strerror(errno);
  std::uint32_t id = 0;
  EXPECT_EQ(userperf_bpf_map_lookup_elem(jmp.fd, &key, &id), 0);
  EXPECT_NE(id, 0u);
  key = 0;
  value = static_cast<std::uint32_t>(state.fd);  // a map descriptor is no program
  EXPECT_EQ(userperf_bpf_map_update_elem(jmp.fd, &key, &value, BPF_ANY), -1);
  EXPECT_EQ(errno, EINVAL);

  // 5 steps: dispatch -> walk x5, the last one done.
  fire(event.fd, 1, sample_with(0));
  EXPECT_EQ(array_value(state.fd, 0), 5u);
  EXPECT_EQ(array_value(state.fd, 3), 1u);
  EXPECT_EQ(array_value(state.fd, 2), 0u);
  EXPECT_EQ(ring.drain().size(), 1u);

  // 33 steps is the most one run can walk: dispatch's tail call and 32 of walk's.
  set_array_value(state.fd, 1, 33);
  fire(event.fd, 1, sample_with(0));
  EXPECT_EQ(array_value(state.fd, 0), 33u);
  EXPECT_EQ(array_value(state.fd, 3), 2u);
  EXPECT_EQ(array_value(state.fd, 2), 0u);

  // 100 wanted: 33 tail calls run walk 33 times, its 34th tail call falls through.
  set_array_value(state.fd, 1, 100);
  fire(event.fd, 1, sample_with(0));
  EXPECT_EQ(array_value(state.fd, 0), 33u);
  EXPECT_EQ(array_value(state.fd, 3), 2u);
  EXPECT_EQ(array_value(state.fd, 2), 1u);
  EXPECT_EQ(ring.drain().size(), 2u);
}

// bpf_loop on real overflows: the callback's effects on the program's stack, its early stop, a
// nested bpf_loop and the flags error, against the same walk computed here.
TEST(OverflowHandler, BpfLoopCallbacksRunAtEachOverflow) {
  Program program("loop_counter", "loop_counter");
  ASSERT_GE(program.fd, 0) << strerror(errno) << "\n" << program.log;
  const Fd result(program.map("result"));
  ASSERT_GE(result.fd, 0);
  perf_event_attr attr = test_attr(PERF_SAMPLE_IP);
  Fd event(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(event.fd, 0);
  MappedRing ring(event.fd, 1);
  ASSERT_TRUE(ring.ok());
  ASSERT_TRUE(attach_and_enable(event.fd, program.fd));

  for (const std::uint64_t addr :
       {0x0000ull, 0x0005ull, 0xffffull, 0x0affull, 0x1c40ull, 0x0164ull}) {
    const std::uint64_t loops = addr & 0xff;
    const std::uint64_t limit = addr >> 8;
    std::uint64_t calls = 0;
    std::uint64_t sum = 0;
    std::uint64_t inner = 0;
    for (std::uint64_t i = 0; i < loops; ++i) {
      ++calls;
      sum += i;
      inner += 1 + 2;
      if (sum >= limit) break;
    }
    fire(event.fd, 1, sample_with(addr));
    EXPECT_EQ(array_value(result.fd, 0), calls) << "addr " << addr;
    EXPECT_EQ(array_value(result.fd, 1), sum) << "addr " << addr;
    EXPECT_EQ(array_value(result.fd, 2), inner) << "addr " << addr;
    EXPECT_EQ(static_cast<std::int64_t>(array_value(result.fd, 3)), -EINVAL) << "addr " << addr;
  }
  EXPECT_EQ(ring.drain().size(), 6u);
}

namespace nested {
core::OverflowHandler* inner_handler = nullptr;
core::Event* inner_event = nullptr;
const core::SampleData* inner_sample = nullptr;
std::atomic<int> calls{0};  // lock-free: signal-safe
std::atomic<int> dropped{0};

void on_signal(int) {
  ++calls;
  if (!inner_handler->on_overflow(*inner_event, *inner_sample)) ++dropped;
}
}  // namespace nested

// The kernel's bpf_prog_active rule: an overflow whose program would run while another program
// runs on the same thread (here a timer signal landing in a run) drops its sample and counts a
// recursion miss; the program does not run. The outer program is the bench filter (a JIT leaf
// on x86-64), the inner one handler_filter, which counts its runs in a map.
TEST(OverflowHandler, ASampleNestedInAProgramRunIsDroppedAndCounted) {
  Program outer_prog("bench_filter", "sample_filter");
  Program inner_prog("handler_filter", "filter");
  ASSERT_GE(outer_prog.fd, 0) << outer_prog.log;
  ASSERT_GE(inner_prog.fd, 0) << inner_prog.log;
  perf_event_attr attr = test_attr(PERF_SAMPLE_ADDR);
  Fd outer(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  Fd inner(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_TRUE(attach_and_enable(outer.fd, outer_prog.fd));
  ASSERT_TRUE(attach_and_enable(inner.fd, inner_prog.fd));
  core::Event* outer_event = engine().event(outer.fd);
  ASSERT_NE(outer_event, nullptr);
  core::OverflowHandler* outer_handler = outer_event->handler.load();
  nested::inner_event = engine().event(inner.fd);
  ASSERT_NE(nested::inner_event, nullptr);
  nested::inner_handler = nested::inner_event->handler.load();
  auto* inner_bpf = dynamic_cast<bpf::BpfOverflowHandler*>(nested::inner_handler);
  ASSERT_NE(inner_bpf, nullptr);
  const core::SampleData kept = sample_with(0x2000);  // handler_filter keeps it: counts[0]
  nested::inner_sample = &kept;

  auto storm = std::make_unique<ThreadSignalTimer>(SIGPROF, nested::on_signal, 20'000);
  ASSERT_TRUE(storm->ok());
  // Most of this loop's time is inside the outer program's run (its handler's guard is set).
  const core::SampleData sample = sample_with(0x401234);
  while (nested::calls < 2000) {
    for (int i = 0; i < 1000; ++i) (void)outer_handler->on_overflow(*outer_event, sample);
  }
  storm.reset();

  const std::uint64_t calls = static_cast<std::uint64_t>(nested::calls.load());
  const std::uint64_t misses = inner_bpf->recursion_misses();
  EXPECT_GT(misses, 0u) << "no signal landed in a run of " << calls;
  EXPECT_LT(misses, calls) << "some signals land between runs";
  // Every drop was a recursion miss, and the program ran exactly at the others.
  EXPECT_EQ(misses, static_cast<std::uint64_t>(nested::dropped.load()));
  const Fd counts(inner_prog.map("counts"));
  ASSERT_GE(counts.fd, 0);
  EXPECT_EQ(array_value(counts.fd, 0), calls - misses);
  // Outside a run, the same call runs the program.
  EXPECT_TRUE(nested::inner_handler->on_overflow(*nested::inner_event, kept));
  EXPECT_EQ(inner_bpf->recursion_misses(), misses);
}

}  // namespace
}  // namespace userperf::testing
