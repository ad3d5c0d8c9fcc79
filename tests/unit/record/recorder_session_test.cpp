// The recorder against a fake agent: a forked child that speaks the protocol by hand and samples
// itself through the userperf C API, as the preloaded agent would. The file it produces is read
// back with perfdata::Reader and, when perf is installed, by perf report and perf script.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "api/engine_instance.hpp"
#include "core/engine.hpp"
#include "perfdata/reader.hpp"
#include "perfdata/writer.hpp"
#include "record/recorder/event_config.hpp"
#include "record/recorder/recorder.hpp"
#include "record/recorder/spawn.hpp"
#include "record/transport.hpp"
#include "ring/ring_memory.hpp"
#include "unit/perfdata/test_files.hpp"
#include "userperf/userperf.h"

namespace userperf::record {
namespace {

std::uint64_t now_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000 +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

int connect_to(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) _exit(90);
  return fd;
}

std::uint64_t greet(int fd, pid_t parent_tid = 0) {
  HelloMessage hello;
  hello.pid = getpid();
  hello.ppid = getppid();
  hello.parent_tid = parent_tid;
  hello.time = now_ns(CLOCK_MONOTONIC);
  WelcomeMessage welcome;
  int fds[kMaxMessageFds];
  int nfds = 0;
  if (send_message(fd, &hello, sizeof hello) != 0 ||
      receive_message(fd, &welcome, sizeof welcome, fds, kMaxMessageFds, &nfds) !=
          static_cast<ssize_t>(sizeof welcome) ||
      welcome.accepted != 1) {
    _exit(91);
  }
  return welcome.id_base;
}

// kHellosAgain: before its orderly exit the child says Hello twice more on new connections, as an
// exec'd image of itself (same pid, same start time) and as a fork child that got the same pid.
enum class Ending { kOrderly, kKilled, kHellosAgain };

// The child: Hello, one thread's events and ring, ~100 ms of CPU, then an orderly exit (status 7)
// or kill -9 with nothing said.
[[noreturn]] void fake_agent(const std::string& socket_path, const RecordConfig& config,
                             Ending ending) {
  // Another test of this executable may have started the engine in the parent: a fresh one here,
  // as the agent's fork handler does.
  api::reset_after_fork();
  const int fd = connect_to(socket_path);
  api::engine().set_id_base(greet(fd));
  perf_event_attr attr = config.events[0].attr;
  const int event = userperf_perf_event_open(&attr, 0, -1, -1, 0);
  std::uint64_t id = 0;
  if (event < 0 ||
      userperf_ioctl(event, PERF_EVENT_IOC_ID, reinterpret_cast<unsigned long>(&id)) != 0) {
    _exit(92);
  }
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* ring = userperf_mmap(nullptr, (1 + config.ring_pages) * page, PROT_READ | PROT_WRITE,
                             MAP_SHARED, event, 0);
  int memfd = userperf_event_ring_fd(event);
  if (ring == MAP_FAILED || memfd < 0) _exit(93);
  ThreadStartMessage start;
  start.pid = getpid();
  start.tid = static_cast<std::int32_t>(gettid());
  start.time = now_ns(CLOCK_MONOTONIC);
  start.nr_events = 1;
  start.events[0] = {0, 0, id};
  if (send_message(fd, &start, sizeof start, &memfd, 1) != 0) _exit(94);
  const std::uint64_t until = now_ns(CLOCK_THREAD_CPUTIME_ID) + 100'000'000;
  volatile std::uint64_t sink = 0;
  // The clock (a system call) once per ~0.5 ms: a loop made of system calls is sampled in the
  // kernel, which exclude_kernel leaves out.
  while (now_ns(CLOCK_THREAD_CPUTIME_ID) < until) {
    for (int i = 0; i < 500'000; ++i) sink = sink + 1;
  }
  if (ending == Ending::kKilled) raise(SIGKILL);
  if (ending == Ending::kHellosAgain) {
    greet(connect_to(socket_path));
    greet(connect_to(socket_path), static_cast<pid_t>(gettid()));
  }
  userperf_close(event);
  ThreadExitMessage exit_message;
  exit_message.pid = start.pid;
  exit_message.tid = start.tid;
  exit_message.time = now_ns(CLOCK_MONOTONIC);
  ProcessExitMessage process_exit;
  process_exit.pid = start.pid;
  process_exit.status = 7;
  process_exit.time = exit_message.time;
  send_message(fd, &exit_message, sizeof exit_message);
  send_message(fd, &process_exit, sizeof process_exit);
  _exit(7);
}

// A client that breaks the protocol in every way the recorder must survive.
[[noreturn]] void bad_client(const std::string& socket_path) {
  const int early = connect_to(socket_path);  // speaks before Hello
  ThreadExitMessage exit_message;
  send_message(early, &exit_message, sizeof exit_message);
  const int shortest = connect_to(socket_path);  // no header
  send_message(shortest, "abc", 3);
  const int fd = connect_to(socket_path);  // a descriptor that is no ring, an id out of range
  const std::uint64_t base = greet(fd);
  // Sealed, so that the recorder gets as far as its control page (a zeroed one describes no data).
  const int not_a_ring = ring::create_ring_memfd("not-a-ring", 2 * ring::page_size());
  if (not_a_ring < 0) _exit(95);
  const int unsealed = memfd_create("unsealed", MFD_CLOEXEC);
  if (ftruncate(unsealed, 3 * sysconf(_SC_PAGESIZE)) != 0) _exit(95);
  ThreadStartMessage start;
  start.pid = getpid();
  start.tid = getpid();
  start.nr_events = 1;
  start.events[0] = {0, 0, base + 1};
  send_message(fd, &start, sizeof start, &not_a_ring, 1);
  start.events[0] = {0, 0, 5};  // not in its id range
  send_message(fd, &start, sizeof start, &not_a_ring, 1);
  start.events[0] = {0, 0, base + 2};  // a memfd the program could shrink under the mapping
  send_message(fd, &start, sizeof start, &unsealed, 1);
  MessageHeader unknown{99, sizeof(MessageHeader)};
  send_message(fd, &unknown, sizeof unknown);
  // A fork child claiming ids no ThreadStart of its parent named (a fork child's Hello waits for
  // no Welcome).
  const int child = connect_to(socket_path);
  HelloMessage hello;
  hello.pid = getpid();
  hello.ppid = getppid();
  hello.parent_tid = getpid();
  hello.inherits = 1;
  send_message(child, &hello, sizeof hello);
  start.events[0] = {0, 0, base + 77};
  send_message(child, &start, sizeof start, &not_a_ring, 1);
  _exit(0);
}

struct Recording {
  int wait_status = 0;
  std::string log;
  std::unique_ptr<perfdata::Reader> reader;
  pid_t child = 0;
};

class RecorderSession : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/recorder-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/perf.data";
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  // Records the fake agent (and, when asked, a bad client beside it) into path_.
  Recording record(Ending ending, bool with_bad_client = false) {
    Recording out;
    auto created = SocketDir::create();
    EXPECT_TRUE(created) << created.error().message;
    if (!created) return out;
    const std::unique_ptr<SocketDir>& sockets = *created;
    RecordRequest request;
    request.period = 200'000;  // a cpu-clock sample every 0.2 ms of CPU
    request.call_graph = CallGraph::kFramePointer;
    const Expected<RecordConfig> built = build_record_config(request, -1);
    EXPECT_TRUE(built) << built.error().message;
    if (!built) return out;
    const RecordConfig& config = *built;
    if (with_bad_client && fork() == 0) bad_client(sockets->socket_path());
    out.child = fork();
    if (out.child == 0) fake_agent(sockets->socket_path(), config, ending);
    auto writer = perfdata::testing::create_writer(path_);
    std::FILE* log = std::tmpfile();
    Recorder recorder(sockets->listen_fd(), config, *writer, log);
    EXPECT_TRUE(recorder.begin());
    EXPECT_TRUE(recorder.run(out.child, &out.wait_status));
    EXPECT_TRUE(recorder.finish()) << writer->error().message;
    if (with_bad_client) {
      while (wait(nullptr) > 0) {
      }
    }
    std::rewind(log);
    char line[512];
    while (std::fgets(line, sizeof line, log) != nullptr) out.log += line;
    std::fclose(log);
    out.reader = perfdata::testing::open_reader(path_);
    return out;
  }

  std::string dir_, path_;
};

struct Counts {
  std::uint64_t samples = 0, comms = 0, exec_comms = 0, mmaps = 0, forks = 0, exits = 0,
                unmapped = 0, rounds = 0;
};

Counts count_records(const perfdata::Reader& reader, pid_t pid) {
  Counts c;
  auto cursor = reader.records();
  perfdata::RecordView r;
  while (cursor.next(r) == perfdata::RecordCursor::Next::kRecord) {
    if (reader.attr_index(r) < 0) ++c.unmapped;
    std::uint32_t record_pid = 0;
    if (r.bytes.size() >= 12) std::memcpy(&record_pid, r.bytes.data() + 8, 4);
    switch (r.header.type) {
      case PERF_RECORD_SAMPLE: {
        // IDENTIFIER, IP, then pid: sample_type order.
        std::uint32_t sample_pid = 0;
        std::memcpy(&sample_pid, r.bytes.data() + 24, 4);
        if (sample_pid == static_cast<std::uint32_t>(pid)) ++c.samples;
        break;
      }
      case PERF_RECORD_COMM:
        c.comms += record_pid == static_cast<std::uint32_t>(pid);
        c.exec_comms += record_pid == static_cast<std::uint32_t>(pid) &&
                        (r.header.misc & PERF_RECORD_MISC_COMM_EXEC);
        break;
      case PERF_RECORD_FORK:
        c.forks += record_pid == static_cast<std::uint32_t>(pid);
        break;
      case PERF_RECORD_MMAP2:
        c.mmaps += record_pid == static_cast<std::uint32_t>(pid);
        break;
      case PERF_RECORD_EXIT:
        c.exits += record_pid == static_cast<std::uint32_t>(pid);
        break;
      case perfdata::kRecordFinishedRound:
        ++c.rounds;
        break;
      default:
        break;
    }
  }
  EXPECT_FALSE(cursor.failed()) << cursor.error().message;
  return c;
}

std::string exe_path() {
  char buf[4096] = {};
  return readlink("/proc/self/exe", buf, sizeof buf - 1) > 0 ? buf : "";
}

TEST_F(RecorderSession, FakeAgentSamplesReachTheFileWithTheProcessState) {
  const Recording r = record(Ending::kOrderly);
  ASSERT_TRUE(r.reader);
  ASSERT_TRUE(WIFEXITED(r.wait_status));
  EXPECT_EQ(WEXITSTATUS(r.wait_status), 7);
  EXPECT_TRUE(r.reader->complete());
  ASSERT_EQ(r.reader->attrs().size(), 1u);
  // The recorder's own id and the one the agent announced, added after the data began.
  const auto& ids = r.reader->attrs()[0].ids;
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0], Recorder::kSyntheticId);
  EXPECT_EQ(ids[1] >> 32, 1u) << "connection 1's id range";
  const Counts c = count_records(*r.reader, r.child);
  EXPECT_GT(c.samples, 100u) << "100 ms of CPU at one sample per 0.2 ms";
  EXPECT_GE(c.comms, 1u);
  EXPECT_GE(c.mmaps, 1u);
  EXPECT_GE(c.exits, 1u);
  EXPECT_EQ(c.unmapped, 0u) << "every record carries a listed id";
  EXPECT_EQ(c.rounds, 0u) << "no FINISHED_ROUND: perf sorts the whole file";
  const perfdata::Features& f = r.reader->features();
  ASSERT_TRUE(f.event_desc.has_value());
  EXPECT_EQ(f.event_desc->at(0).name, "cpu-clock");
  EXPECT_EQ(f.event_desc->at(0).ids.size(), 2u);
  ASSERT_TRUE(f.build_ids.has_value());
  bool exe_has_id = false;
  for (const auto& b : *f.build_ids) exe_has_id = exe_has_id || b.filename == exe_path();
  EXPECT_TRUE(exe_has_id) << "BUILD_ID names the test binary";
  ASSERT_TRUE(f.pmu_mappings.has_value());
  EXPECT_EQ(f.pmu_mappings->at(0).name, "software");
  EXPECT_TRUE(r.log.empty()) << r.log;
}

TEST_F(RecorderSession, KilledCommandLosesNothingCommitted) {
  const Recording r = record(Ending::kKilled);
  ASSERT_TRUE(r.reader);
  ASSERT_TRUE(WIFSIGNALED(r.wait_status));
  EXPECT_EQ(WTERMSIG(r.wait_status), SIGKILL);
  EXPECT_TRUE(r.reader->complete());
  EXPECT_GT(count_records(*r.reader, r.child).samples, 100u);
}

// The same pid again: an exec (no forking thread, the same start time) gets COMM|EXEC; a fork
// child (a forking thread: the pid was reused) is a new process with its FORK.
TEST_F(RecorderSession, ExecKeepsTheProcessAReusedPidIsANewOne) {
  const Recording r = record(Ending::kHellosAgain);
  ASSERT_TRUE(r.reader);
  const Counts c = count_records(*r.reader, r.child);
  EXPECT_EQ(c.exec_comms, 1u);
  EXPECT_EQ(c.forks, 1u);
  EXPECT_GT(c.samples, 100u);
}

TEST_F(RecorderSession, ProtocolViolationsAreReportedAndTheRestRecorded) {
  const Recording r = record(Ending::kOrderly, true);
  ASSERT_TRUE(r.reader);
  EXPECT_GT(count_records(*r.reader, r.child).samples, 100u);
  EXPECT_NE(r.log.find("spoke before Hello"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("has no header"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("control page"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("not sealed"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("outside its range"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("unknown message type 99"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("is not one its parent had"), std::string::npos) << r.log;
}

TEST_F(RecorderSession, PerfReadsTheFileWithoutComplaint) {
  if (access("/usr/bin/perf", X_OK) != 0) GTEST_SKIP() << "perf is not installed";
  const Recording r = record(Ending::kOrderly);
  ASSERT_TRUE(r.reader);
  for (const std::string tool : {"report --stdio", "script"}) {
    const std::string err = dir_ + "/err.txt";
    const std::string cmd = "perf " + tool + " -i " + path_ + " >" + dir_ + "/out.txt 2>" + err;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream in(err);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(text.empty()) << "perf " << tool << ": " << text;
  }
}

}  // namespace
}  // namespace userperf::record
