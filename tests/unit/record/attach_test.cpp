// record -p's pieces on their own: a function call made in another process (remote_call), with
// everything of the thread put back, and the exported functions of an ELF file (elf_symbols) read
// with bounded reads.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "record/attach/elf_symbols.hpp"
#include "record/attach/remote_call.hpp"

// Called in the child through remote_call: the arguments must arrive, strings on its stack.
extern "C" __attribute__((noinline, used)) long userperf_test_remote_add(long a, long b,
                                                                         const char* text) {
  return a + b + static_cast<long>(std::strlen(text));
}

// Clobbers every vector register, as any called function may: the caller's must come back.
extern "C" __attribute__((noinline, used)) long userperf_test_remote_clobber() {
  asm volatile(
      "pcmpeqd %%xmm0, %%xmm0\n pcmpeqd %%xmm1, %%xmm1\n pcmpeqd %%xmm2, %%xmm2\n"
      "pcmpeqd %%xmm3, %%xmm3\n pcmpeqd %%xmm4, %%xmm4\n pcmpeqd %%xmm5, %%xmm5\n"
      "pcmpeqd %%xmm6, %%xmm6\n pcmpeqd %%xmm7, %%xmm7\n pcmpeqd %%xmm8, %%xmm8\n"
      "pcmpeqd %%xmm9, %%xmm9\n pcmpeqd %%xmm10, %%xmm10\n pcmpeqd %%xmm11, %%xmm11\n"
      "pcmpeqd %%xmm12, %%xmm12\n pcmpeqd %%xmm13, %%xmm13\n pcmpeqd %%xmm14, %%xmm14\n"
      "pcmpeqd %%xmm15, %%xmm15\n" ::
          : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
            "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
  return 7;
}

namespace userperf::record {
namespace {

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

std::string libc_path() {
  for (const LoadedObject& o : loaded_objects(getpid(), "libc.so")) return o.path;
  return {};
}

TEST(ElfSymbols, FindsTheCLibrarysDlopen) {
  const std::string path = libc_path();
  ASSERT_FALSE(path.empty());
  Expected<DynamicSymbols> symbols = parse_dynamic_symbols(read_bytes(path));
  ASSERT_TRUE(symbols) << symbols.error().message;
  EXPECT_NE(symbols->find("dlopen"), 0u);
  EXPECT_NE(symbols->find("dlerror"), 0u);
  EXPECT_EQ(symbols->find("no_such_function_here"), 0u);
  // The run-time address of this process's own getpid, computed as for another process.
  for (const LoadedObject& o : loaded_objects(getpid(), "libc.so")) {
    Expected<std::uint64_t> address = remote_function(getpid(), o, "getpid");
    ASSERT_TRUE(address) << address.error().message;
    EXPECT_EQ(*address, reinterpret_cast<std::uint64_t>(&getpid));
  }
}

TEST(ElfSymbols, TruncatedOrCorruptFilesAreRefusedNotOverread) {
  const std::vector<std::uint8_t> whole = read_bytes(libc_path());
  ASSERT_GT(whole.size(), 4096u);
  EXPECT_EQ(parse_dynamic_symbols({}).error().code, ENOEXEC);
  EXPECT_EQ(parse_dynamic_symbols({'x', 'y'}).error().code, ENOEXEC);
  // Every prefix a page long or more ends in a refusal or a subset of the symbols, never a read
  // past the copy (ASan checks the reads).
  for (std::size_t size = 64; size < whole.size(); size += whole.size() / 37) {
    const std::vector<std::uint8_t> prefix(whole.begin(),
                                           whole.begin() + static_cast<std::ptrdiff_t>(size));
    Expected<DynamicSymbols> parsed = parse_dynamic_symbols(prefix);
    if (!parsed) {
      EXPECT_EQ(parsed.error().code, ENOEXEC);
    }
  }
  // Section headers pointing far outside the file.
  std::vector<std::uint8_t> bad = whole;
  const std::uint64_t far = ~std::uint64_t{0} - 16;
  std::memcpy(bad.data() + 0x28, &far, sizeof far);  // e_shoff
  Expected<DynamicSymbols> parsed = parse_dynamic_symbols(bad);
  EXPECT_FALSE(parsed);
}

// A child that computes in a loop until told to stop (shared flag), then blocks in read() on a
// pipe: it exits 0 when every result it computed was right and the read returned its byte.
struct Child {
  pid_t pid = -1;
  int pipe_write = -1;
  std::atomic<int>* stop = nullptr;
};

__attribute__((noinline)) double series(int n) {
  double a = 0;
  double b = 0;
  for (int i = 1; i <= n; ++i) {
    a += 1.0 / i;
    b += a * 1e-3;
  }
  return a + b;
}

Child start_child(bool in_read) {
  Child c;
  c.stop = static_cast<std::atomic<int>*>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  new (c.stop) std::atomic<int>(0);
  int fds[2];
  if (pipe(fds) != 0) return c;
  const double expected = series(20000);
  c.pid = fork();
  if (c.pid == 0) {
    // Never outlives a test that failed before it told the child to stop.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(60);
    close(fds[1]);
    if (in_read) {
      char byte = 0;
      const ssize_t n = read(fds[0], &byte, 1);
      _exit(n == 1 && byte == 'x' ? 0 : 2);
    }
    // A pattern in a vector register the loop never writes: it must still be there after every
    // remote call (which clobbers all of them).
    const std::uint64_t pattern = 0x0123456789abcdefULL;
    asm volatile("movq %0, %%xmm9" ::"r"(pattern) : "xmm9");
    while (c.stop->load() == 0) {
      std::uint64_t seen = 0;
      asm volatile("movq %%xmm9, %0" : "=r"(seen));
      if (seen != pattern) _exit(3);
      if (series(20000) != expected) _exit(1);
    }
    _exit(0);
  }
  close(fds[0]);
  c.pipe_write = fds[1];
  return c;
}

int finish_child(Child& c) {
  c.stop->store(1);
  if (write(c.pipe_write, "x", 1) != 1) return -1;
  close(c.pipe_write);
  int status = 0;
  while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  munmap(c.stop, 4096);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(RemoteCall, CallsAFunctionAndPutsTheThreadBack) {
  Child c = start_child(false);
  ASSERT_GT(c.pid, 0);
  usleep(20000);
  for (int round = 0; round < 20; ++round) {
    Expected<std::unique_ptr<RemoteThread>> thread = RemoteThread::stop(c.pid, c.pid);
    ASSERT_TRUE(thread) << thread.error().message;
    const user_regs_struct before = (*thread)->regs();
    Expected<std::uint64_t> result =
        (*thread)->call(reinterpret_cast<std::uint64_t>(&userperf_test_remote_add),
                        {std::uint64_t{2}, std::uint64_t{40}, std::string("abc")});
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(*result, 45u);
    Expected<std::uint64_t> clobbered =
        (*thread)->call(reinterpret_cast<std::uint64_t>(&userperf_test_remote_clobber), {});
    ASSERT_TRUE(clobbered) << clobbered.error().message;
    EXPECT_EQ(*clobbered, 7u);
    EXPECT_EQ(std::memcmp(&before, &(*thread)->regs(), sizeof before), 0);
    usleep(2000);  // detached at the end of the round: it runs on
  }
  EXPECT_EQ(finish_child(c), 0) << "the child computed a wrong result after the calls";
}

TEST(RemoteCall, ASystemCallInterruptedByTheStopRestarts) {
  Child c = start_child(true);
  ASSERT_GT(c.pid, 0);
  usleep(20000);  // blocked in read() by now
  {
    Expected<std::unique_ptr<RemoteThread>> thread = RemoteThread::stop(c.pid, c.pid);
    ASSERT_TRUE(thread) << thread.error().message;
    EXPECT_GE(static_cast<long long>((*thread)->regs().orig_rax), 0) << "not in a system call";
    Expected<std::uint64_t> result =
        (*thread)->call(reinterpret_cast<std::uint64_t>(&userperf_test_remote_add),
                        {std::uint64_t{1}, std::uint64_t{1}, std::string()});
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(*result, 2u);
  }
  EXPECT_EQ(finish_child(c), 0) << "read() did not restart after the call";
}

TEST(RemoteCall, AFaultInsideTheCallIsReportedAndTheThreadPutBack) {
  Child c = start_child(false);
  ASSERT_GT(c.pid, 0);
  usleep(20000);
  {
    Expected<std::unique_ptr<RemoteThread>> thread = RemoteThread::stop(c.pid, c.pid);
    ASSERT_TRUE(thread) << thread.error().message;
    // Calls into an unmapped page: the fault ends the call, the thread goes on as before.
    Expected<std::uint64_t> result = (*thread)->call(0x1000, {});
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, EFAULT);
  }
  EXPECT_EQ(finish_child(c), 0);
}

TEST(RemoteCall, NoSuchThreadIsEsrch) {
  Expected<std::unique_ptr<RemoteThread>> thread = RemoteThread::stop(999999, 999999);
  ASSERT_FALSE(thread);
  EXPECT_EQ(thread.error().code, ESRCH);
}

}  // namespace
}  // namespace userperf::record
