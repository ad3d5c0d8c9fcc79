// The log source as a flight recorder: records written by the application survive in the AUX
// area (overwrite mode keeps the newest), a process that crashed leaves them in the memfds for
// another process to read, and the crash handler writes them out itself.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>

#include "support/trace_sources.hpp"
#include "trace/log_format.hpp"
#include "userperf/log.h"
#include "userperf/userperf.h"

namespace userperf {
namespace {

using testing::MappedAux;
using testing::OwnedFd;

std::string record_text(int i) {
  return "record " + std::to_string(i) + std::string(static_cast<std::size_t>(i % 13), '.');
}

std::vector<trace::LogRecord> decode(const std::vector<std::uint8_t>& bytes) {
  std::vector<trace::LogRecord> records;
  const Expected<void> decoded = trace::decode_log(bytes, records);
  EXPECT_TRUE(decoded) << decoded.error().message << " at " << decoded.error().offset;
  return records;
}

// Records first..last (inclusive) are all there, in order, with the writer's thread id.
void expect_records(const std::vector<trace::LogRecord>& records, int first, int last, pid_t tid) {
  ASSERT_EQ(records.size(), static_cast<std::size_t>(last - first + 1));
  for (int i = first; i <= last; ++i) {
    const trace::LogRecord& r = records[static_cast<std::size_t>(i - first)];
    EXPECT_EQ(r.payload, record_text(i));
    EXPECT_EQ(r.tid, static_cast<std::uint32_t>(tid));
  }
}

TEST(LogPmu, OverwriteAreaKeepsTheNewestRecords) {
  perf_event_attr attr = testing::source_attr("log");
  OwnedFd fd(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(fd, 0) << strerror(errno);
  MappedAux m(fd, 4, 2, /*overwrite=*/true);
  ASSERT_TRUE(m.ok()) << strerror(m.map_errno);
  EXPECT_EQ(userperf_log_write(fd, "x", 1), -1);  // disabled
  EXPECT_EQ(errno, ENOTCONN);
  ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  constexpr int kRecords = 2000;  // ~90 KiB through an 8 KiB area
  for (int i = 0; i < kRecords; ++i) {
    const std::string text = record_text(i);
    ASSERT_EQ(userperf_log_write(fd, text.data(), text.size()), 0) << i;
  }
  const auto records = decode(testing::newest_bytes(m));
  ASSERT_GT(records.size(), 50u);
  const int first = kRecords - static_cast<int>(records.size());
  expect_records(records, first, kRecords - 1, gettid());
  std::uint64_t count = 0;
  ASSERT_EQ(userperf_read(fd, &count, sizeof count), 8);
  EXPECT_EQ(count, static_cast<std::uint64_t>(kRecords));
}

TEST(LogPmu, Errors) {
  perf_event_attr attr = testing::source_attr("log");
  attr.disabled = 0;
  OwnedFd fd(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(fd, 0) << strerror(errno);
  EXPECT_EQ(userperf_log_write(fd, "x", 1), -1);  // no AUX area
  EXPECT_EQ(errno, ENOTCONN);
  MappedAux m(fd, 4, 1, /*overwrite=*/false);
  ASSERT_TRUE(m.ok());
  std::vector<char> big(70'000, 'b');
  EXPECT_EQ(userperf_log_write(fd, big.data(), big.size()), -1);
  EXPECT_EQ(errno, EMSGSIZE);
  EXPECT_EQ(userperf_log_write(fd, big.data(), 5000), -1);  // larger than the 4 KiB area
  EXPECT_EQ(errno, EMSGSIZE);
  EXPECT_EQ(userperf_log_write(12345, "x", 1), -1);
  EXPECT_EQ(errno, EBADF);
  perf_event_attr test = testing::source_attr("synthetic");
  OwnedFd other(userperf_perf_event_open(&test, 0, -1, -1, 0));
  EXPECT_EQ(userperf_log_write(other, "x", 1), -1);
  EXPECT_EQ(errno, EBADF);
  for (__u64 perf_event_attr::*field :
       {&perf_event_attr::config, &perf_event_attr::config1, &perf_event_attr::config2}) {
    perf_event_attr configured = testing::source_attr("log");
    configured.*field = 1;  // a log takes no configuration
    EXPECT_EQ(userperf_perf_event_open(&configured, 0, -1, -1, 0), -1);
    EXPECT_EQ(errno, EINVAL);
  }
  EXPECT_EQ(userperf_log_printf(fd, "n=%d", 42), 0);
  ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);  // ends the handle: aux_head
  const auto records = decode(testing::consume(m));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].payload, "n=42");
}

TEST(LogPmu, DumpWritesTheNewestRecords) {
  perf_event_attr attr = testing::source_attr("log");
  OwnedFd fd(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(fd, 0);
  MappedAux m(fd, 4, 4, /*overwrite=*/true);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(userperf_ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  for (int i = 0; i < 100; ++i) {
    const std::string text = record_text(i);
    ASSERT_EQ(userperf_log_write(fd, text.data(), text.size()), 0);
  }
  const int out = memfd_create("log-dump", 0);
  ASSERT_GE(out, 0);
  ASSERT_EQ(userperf_log_dump(fd, out), 0);
  const off_t size = lseek(out, 0, SEEK_END);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  ASSERT_EQ(pread(out, bytes.data(), bytes.size(), 0), size);
  close(out);
  expect_records(decode(bytes), 0, 99, gettid());
  // The dump re-enabled the event.
  EXPECT_EQ(userperf_log_write(fd, "after", 5), 0);
  EXPECT_EQ(userperf_log_dump(12345, 1), -1);
  EXPECT_EQ(errno, EBADF);
}

// userperf_log_thread_write: the calling thread's own log event, never one opened on another
// thread, and ENOTCONN on a thread without one.
TEST(LogPmu, ThreadWriteFindsTheCallingThreadsOwnLog) {
  ASSERT_NE(&userperf_log_thread_write, nullptr);  // the userperf library defines it
  EXPECT_EQ(userperf_log_thread("x", 1), -1);
  EXPECT_EQ(errno, ENOTCONN);
  perf_event_attr attr = testing::source_attr("log");
  // A log this thread opened on another thread is not this thread's.
  std::atomic<pid_t> sleeper_tid{0};
  std::atomic<bool> done{false};
  std::thread sleeper([&] {
    sleeper_tid = gettid();
    while (!done.load()) usleep(1000);
  });
  while (sleeper_tid == 0) usleep(100);
  {
    OwnedFd elsewhere(userperf_perf_event_open(&attr, sleeper_tid, -1, -1, 0));
    EXPECT_GE(elsewhere, 0) << strerror(errno);
    MappedAux e(elsewhere, 4, 4, /*overwrite=*/true);
    EXPECT_TRUE(e.ok());
    EXPECT_EQ(userperf_ioctl(elsewhere, PERF_EVENT_IOC_ENABLE, 0), 0);
    EXPECT_EQ(userperf_log_thread("x", 1), -1);
    EXPECT_EQ(errno, ENOTCONN);
  }
  done = true;
  sleeper.join();
  OwnedFd mine(userperf_perf_event_open(&attr, 0, -1, -1, 0));
  ASSERT_GE(mine, 0) << strerror(errno);
  MappedAux m(mine, 4, 4, /*overwrite=*/true);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(userperf_ioctl(mine, PERF_EVENT_IOC_ENABLE, 0), 0);

  // Another thread with a log of its own writes there, and never into this thread's log.
  std::vector<std::uint8_t> theirs_bytes;
  pid_t their_tid = 0;
  std::thread other([&] {
    their_tid = gettid();
    EXPECT_EQ(userperf_log_thread("x", 1), -1);  // no log on this thread yet
    EXPECT_EQ(errno, ENOTCONN);
    OwnedFd theirs(userperf_perf_event_open(&attr, 0, -1, -1, 0));
    ASSERT_GE(theirs, 0);
    MappedAux t(theirs, 4, 4, /*overwrite=*/true);
    ASSERT_TRUE(t.ok());
    ASSERT_EQ(userperf_ioctl(theirs, PERF_EVENT_IOC_ENABLE, 0), 0);
    for (int i = 100; i < 110; ++i) {
      const std::string text = record_text(i);
      ASSERT_EQ(userperf_log_thread(text.data(), text.size()), 0);
    }
    theirs_bytes = testing::newest_bytes(t);
  });
  other.join();
  expect_records(decode(theirs_bytes), 100, 109, their_tid);

  for (int i = 0; i < 20; ++i) {
    const std::string text = record_text(i);
    ASSERT_EQ(userperf_log_thread(text.data(), text.size()), 0);
  }
  expect_records(decode(testing::newest_bytes(m)), 0, 19, gettid());
  std::vector<char> big(70'000, 'b');
  EXPECT_EQ(userperf_log_thread(big.data(), big.size()), -1);
  EXPECT_EQ(errno, EMSGSIZE);
}

// ---- crashes
// -------------------------------------------------------------------------------------

void send_fds(int sock, int a, int b) {
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
  const int fds[2] = {a, b};
  std::memcpy(CMSG_DATA(cm), fds, sizeof fds);
  if (sendmsg(sock, &msg, 0) != 1) _exit(3);
}

bool receive_fds(int sock, int& a, int& b) {
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (recvmsg(sock, &msg, 0) != 1) return false;
  const cmsghdr* cm = CMSG_FIRSTHDR(&msg);
  if (cm == nullptr || cm->cmsg_type != SCM_RIGHTS) return false;
  int fds[2];
  std::memcpy(fds, CMSG_DATA(cm), sizeof fds);
  a = fds[0];
  b = fds[1];
  return true;
}

constexpr int kCrashRecords = 300;
constexpr std::size_t kCrashAuxPages = 16;

// The child: a log event with an overwrite area, records, then the crash. Never returns.
[[noreturn]] void crashing_child(int sock, int dump_fd, bool null_store) {
  perf_event_attr attr = testing::source_attr("log");
  attr.disabled = 0;
  const int fd = userperf_perf_event_open(&attr, 0, -1, -1, 0);
  if (fd < 0) _exit(2);
  auto* m = new MappedAux(fd, 1, kCrashAuxPages, /*overwrite=*/true);
  if (!m->ok()) _exit(2);
  if (sock >= 0) send_fds(sock, userperf_event_ring_fd(fd), userperf_event_aux_fd(fd));
  if (dump_fd >= 0 && userperf_log_dump_on_crash(fd, dump_fd) != 0) _exit(2);
  const pid_t tid = gettid();
  if (write(sock >= 0 ? sock : dump_fd, &tid, 0) < 0) _exit(2);
  for (int i = 0; i < kCrashRecords; ++i) {
    const std::string text = record_text(i);
    if (userperf_log_write(fd, text.data(), text.size()) != 0) _exit(4);
  }
  if (null_store) {
    volatile int* volatile nowhere = nullptr;
    *nowhere = 1;
  }
  abort();
}

TEST(LogPmu, RecordsSurviveACrashInTheMemfds) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(sv[0]);
    crashing_child(sv[1], -1, /*null_store=*/true);
  }
  close(sv[1]);
  int ring_fd = -1;
  int aux_fd = -1;
  const bool received = receive_fds(sv[0], ring_fd, aux_fd);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  close(sv[0]);
  ASSERT_TRUE(received);
  // Died of the crash (a signal, or the sanitizer's report and exit), not of a setup failure.
  EXPECT_TRUE(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 1)) << status;

  const std::size_t pg = testing::page();
  const std::size_t aux_len = kCrashAuxPages * pg;
  void* control = mmap(nullptr, pg, PROT_READ, MAP_SHARED, ring_fd, 0);
  void* aux = mmap(nullptr, aux_len, PROT_READ, MAP_SHARED, aux_fd, 0);
  ASSERT_NE(control, MAP_FAILED);
  ASSERT_NE(aux, MAP_FAILED);
  const ring::AuxView view{static_cast<const perf_event_mmap_page*>(control),
                           static_cast<const std::uint8_t*>(aux), aux_len};
  std::vector<std::uint8_t> bytes(aux_len);
  std::uint64_t head = 0;
  bytes.resize(ring::copy_newest_aux(view, bytes.data(), bytes.size(), &head));
  EXPECT_GT(head, 0u);
  const auto records = decode(bytes);
  ASSERT_EQ(records.size(), static_cast<std::size_t>(kCrashRecords));
  for (int i = 0; i < kCrashRecords; ++i) EXPECT_EQ(records[i].payload, record_text(i));
  munmap(control, pg);
  munmap(aux, aux_len);
  close(ring_fd);
  close(aux_fd);
}

TEST(LogPmu, CrashHandlerDumpsTheRecords) {
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipefd[0]);
    crashing_child(-1, pipefd[1], /*null_store=*/false);
  }
  close(pipefd[1]);
  std::vector<std::uint8_t> bytes;
  std::uint8_t buf[4096];
  for (;;) {
    const ssize_t n = read(pipefd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.insert(bytes.end(), buf, buf + n);
  }
  close(pipefd[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  // The handler re-raised the signal under its previous (default) disposition.
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGABRT);
  const auto records = decode(bytes);
  ASSERT_EQ(records.size(), static_cast<std::size_t>(kCrashRecords));
  for (int i = 0; i < kCrashRecords; ++i) EXPECT_EQ(records[i].payload, record_text(i));
}

}  // namespace
}  // namespace userperf
