// Copying a thread's live stack into a sample (PERF_SAMPLE_STACK_USER). SIGNAL-SAFE.
#pragma once

#include <cstddef>

namespace userperf::core {

// A ring::CopyFn that copies len bytes of stack starting at src + offset. The bytes above an
// interrupted stack pointer include other frames' padding, which AddressSanitizer poisons as
// redzones: a stack dump reads them on purpose, so this copy is not instrumented. The PMU
// guarantees the range lies inside the thread's mapped stack. Returns 0 (nothing missed).
std::size_t copy_stack_bytes(void* dst, const void* src, std::size_t offset, std::size_t len);

}  // namespace userperf::core
