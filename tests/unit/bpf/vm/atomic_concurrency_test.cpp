// Atomics act on the real memory: two threads running the same program on one shared map-value
// region lose no update (run under TSan).
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "vm_test_support.hpp"

namespace userperf::bpf {
namespace {

constexpr int kRunsPerThread = 20000;

void run_from_two_threads(const Interpreter& interpreter, std::uint64_t* shared) {
  const MemoryRegion region = testing::region_of(shared, 2 * sizeof(std::uint64_t), true);
  auto work = [&] {
    for (int i = 0; i < kRunsPerThread; ++i) {
      RunResult result =
          interpreter.run(reinterpret_cast<std::uintptr_t>(shared), 0, {&region, 1}, nullptr);
      ASSERT_EQ(result.status, RunStatus::kOk);
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
}

TEST(AtomicConcurrency, LockAddLosesNoUpdate) {
  auto interpreter = testing::load_asm("mov %r2, 1\nlock add [%r1], %r2\nmov %r0, 0\nexit");
  ASSERT_TRUE(interpreter);
  alignas(8) std::uint64_t shared[2] = {};
  run_from_two_threads(*interpreter, shared);
  EXPECT_EQ(__atomic_load_n(&shared[0], __ATOMIC_SEQ_CST), 2u * kRunsPerThread);
}

TEST(AtomicConcurrency, CmpxchgRetryLoopLosesNoUpdate) {
  // Read with an atomic fetch-add of 0, then compare-and-swap old+1 until it sticks.
  auto interpreter = testing::load_asm(R"(
    retry:
      mov %r0, 0
      lock fetch add [%r1+8], %r0
      mov %r3, %r0
      mov %r2, %r0
      add %r2, 1
      lock cmpxchg [%r1+8], %r2
      jne %r0, %r3, retry
      exit
  )");
  ASSERT_TRUE(interpreter);
  alignas(8) std::uint64_t shared[2] = {};
  run_from_two_threads(*interpreter, shared);
  EXPECT_EQ(__atomic_load_n(&shared[1], __ATOMIC_SEQ_CST), 2u * kRunsPerThread);
}

}  // namespace
}  // namespace userperf::bpf
