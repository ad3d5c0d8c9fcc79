// The verifier's prototype table and the runtime's function table name the same helpers: a
// program the verifier accepts never calls a helper the interpreter lacks, and the runtime
// offers nothing the verifier would not check.
#include <gtest/gtest.h>

#include <linux/bpf.h>
#include <linux/perf_event.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "bpf/perf/perf_event_ctx.hpp"
#include "bpf/perf/perf_helpers.hpp"
#include "bpf/verifier/helper_protos.hpp"
#include "core/event.hpp"

namespace userperf::bpf {
namespace {

TEST(HelperTable, EveryPrototypeHasAFunctionAndEveryFunctionAPrototype) {
  const std::vector<HelperFn> table = perf_event_helper_table();
  int allowed = 0;
  for (std::int32_t id = 0; id < 256; ++id) {
    const HelperProto* proto = perf_event_helper_proto(id);
    const bool has_function = static_cast<std::size_t>(id) < table.size() && table[id] != nullptr;
    EXPECT_EQ(proto != nullptr, has_function)
        << "helper " << id << (proto ? std::string(" ") + proto->name : "");
    allowed += proto != nullptr;
  }
  EXPECT_LE(table.size(), 256u);
  EXPECT_GE(allowed, 25);
}

// bpf_read_branch_records: userperf's samples carry no branch records. Unknown flags are EINVAL
// first; an event that does not sample PERF_SAMPLE_BRANCH_STACK is ENOENT (the kernel's answer for
// a sample without a branch stack); one that does has an empty stack: 0 bytes, size 0, and a buffer
// that is NULL or not a whole number of entries is EINVAL.
TEST(PerfHelpers, ReadBranchRecordsFindsNone) {
  const std::vector<HelperFn> table = perf_event_helper_table();
  core::SampleData sample;
  core::Event event;
  PerfEventRunCtx run{&sample, kNoRegs, &event, nullptr};
  CallContext call;
  call.env = &run;
  const auto read = [&](std::uint64_t buf, std::uint64_t size, std::uint64_t flags) {
    return static_cast<std::int64_t>(
        table[BPF_FUNC_read_branch_records](0, buf, size, flags, 0, call));
  };
  std::uint64_t entries[6] = {};
  const auto buf = reinterpret_cast<std::uint64_t>(entries);
  EXPECT_EQ(read(buf, sizeof entries, 2), -EINVAL);
  EXPECT_EQ(read(buf, sizeof entries, 0), -ENOENT);
  EXPECT_EQ(read(0, 0, BPF_F_GET_BRANCH_RECORDS_SIZE), -ENOENT);
  event.attr.sample_type = PERF_SAMPLE_BRANCH_STACK;
  EXPECT_EQ(read(0, 0, BPF_F_GET_BRANCH_RECORDS_SIZE), 0);
  EXPECT_EQ(read(buf, sizeof entries, 0), 0);
  EXPECT_EQ(read(buf, 16, 0), -EINVAL);
  EXPECT_EQ(read(0, 0, 0), -EINVAL);
}

// bpf_perf_prog_read_value writes bpf_perf_event_value into any writable memory the verifier
// accepts, whatever its alignment (the kernel's ARG_PTR_TO_UNINIT_MEM): a stack buffer at an odd
// offset gets the count, enabled and running times byte for byte (fuzz_bpf_insns found the
// helper storing u64s there, undefined behaviour UBSan stops at).
TEST(PerfHelpers, PerfProgReadValueFillsAnUnalignedBuffer) {
  const std::vector<HelperFn> table = perf_event_helper_table();
  core::SampleData sample;
  core::Event event;
  event.count.store(0x1122334455667788);
  PerfEventRunCtx run{&sample, kNoRegs, &event, nullptr};
  alignas(8) std::uint8_t stack[40] = {};
  const MemoryRegion region{reinterpret_cast<std::uintptr_t>(stack),
                            reinterpret_cast<std::uintptr_t>(stack) + sizeof stack, true};
  CallContext call;
  call.env = &run;
  call.regions = {&region, 1};
  const auto buf = reinterpret_cast<std::uint64_t>(stack + 5);
  EXPECT_EQ(table[BPF_FUNC_perf_prog_read_value](0, buf, 24, 0, 0, call), 0u);
  std::uint64_t values[3];
  std::memcpy(values, stack + 5, sizeof values);
  EXPECT_EQ(values[0], 0x1122334455667788u);
  EXPECT_EQ(values[1], 0u);  // never enabled
  EXPECT_EQ(values[2], 0u);
  EXPECT_EQ(stack[4], 0) << "nothing written before the buffer";
  EXPECT_EQ(stack[29], 0) << "nothing written past it";
  EXPECT_EQ(static_cast<std::int64_t>(table[BPF_FUNC_perf_prog_read_value](0, buf, 23, 0, 0, call)),
            -EINVAL);
}

}  // namespace
}  // namespace userperf::bpf
