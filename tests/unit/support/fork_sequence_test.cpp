// The one fork sequence (support/fork_sequence.hpp) and the task ids it forgets: stages run in
// reverse before the fork and in order after it, and in the child every stage already sees the
// child's ids.
#include "support/fork_sequence.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>

#include "support/task_ids.hpp"

namespace userperf::support {
namespace {

// What ran, in order: one letter per hook, in memory a fork child shares with nobody (checked in
// the child itself, which exits with the verdict).
char g_trace[16];
std::atomic<int> g_len{0};
pid_t g_pid_seen_by_child_hook = 0;
pid_t g_tid_seen_by_child_hook = 0;

void note(char c) {
  const int i = g_len.fetch_add(1);
  if (i < static_cast<int>(sizeof g_trace) - 1) g_trace[i] = c;
}

void reset_trace() {
  std::memset(g_trace, 0, sizeof g_trace);
  g_len.store(0);
}

TEST(ForkSequence, StagesRunInReverseBeforeAndInOrderAfterWithTheChildsIds) {
  set_fork_hooks(ForkStage::kPmu, {.prepare = [] { note('p'); },
                                   .parent = [] { note('P'); },
                                   .child =
                                       [] {
                                         note('C');
                                         g_pid_seen_by_child_hook = current_pid();
                                         g_tid_seen_by_child_hook = current_tid();
                                       }});
  set_fork_hooks(
      ForkStage::kAgent,
      {.prepare = [] { note('a'); }, .parent = [] { note('A'); }, .child = [] { note('D'); }});
  // The parent's ids are cached before the fork: the child must not keep them.
  ASSERT_EQ(current_pid(), getpid());
  ASSERT_EQ(current_tid(), gettid());
  ASSERT_EQ(cached_tid(), gettid());
  reset_trace();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const bool ok = std::strcmp(g_trace, "apCD") == 0 && g_pid_seen_by_child_hook == getpid() &&
                    g_tid_seen_by_child_hook == gettid() && current_pid() == getpid() &&
                    current_tid() == gettid();
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(std::string(g_trace), "apPA");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child saw its hooks out of order or stale ids";
  EXPECT_EQ(current_pid(), getpid());
  set_fork_hooks(ForkStage::kPmu, {});
  set_fork_hooks(ForkStage::kAgent, {});
}

TEST(TaskIds, EachThreadHasItsOwn) {
  pid_t seen = 0;
  std::thread([&] { seen = current_tid(); }).join();
  EXPECT_NE(seen, current_tid());
  EXPECT_GT(seen, 0);
}

}  // namespace
}  // namespace userperf::support
