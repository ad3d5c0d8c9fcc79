// SampleData: what a PMU knows about one overflow (the kernel's perf_sample_data plus the
// interrupted registers). The PMU fills what it has; the output path (sample_output.hpp) fills the
// kernel's defaults for the rest and sizes the record.
//
// Built on the stack of every overflow, so it holds only what every sample may carry (the head
// words, the cpumode, a RAW payload) and is cheap to clear. What few PMUs supply (registers, a call
// chain, the user stack, and the fields no userperf PMU measures) is SampleExtras, by pointer.
#pragma once

#include <asm/perf_regs.h>
#include <linux/perf_event.h>

#include <cstdint>

#include "core/raw_record.hpp"

namespace userperf::core {

// Registers of the sampled context, indexed by enum perf_event_x86_regs.
struct SampleRegs {
  std::uint64_t abi = PERF_SAMPLE_REGS_ABI_NONE;
  std::uint64_t values[PERF_REG_X86_64_MAX] = {};
};

// The user stack to dump for PERF_SAMPLE_STACK_USER: `available` readable bytes from `sp` up.
struct SampleStack {
  const void* sp = nullptr;
  std::uint64_t available = 0;
};

// PERF_MEM_NA: what the kernel reports when the PMU has no data source (0x1e05080021).
constexpr std::uint64_t kDataSrcNotAvailable = PERF_MEM_S(OP, NA) | PERF_MEM_S(LVL, NA) |
                                               PERF_MEM_S(SNOOP, NA) | PERF_MEM_S(LOCK, NA) |
                                               PERF_MEM_S(TLB, NA) | PERF_MEM_S(LVLNUM, NA);

// The fields of a sample that only some PMUs supply. A sample without them (SampleData::extras
// nullptr) has the kernel's defaults: these values as initialised.
struct SampleExtras {
  std::uint64_t weight = 0;
  std::uint64_t data_src = kDataSrcNotAvailable;
  std::uint64_t transaction = 0;
  std::uint64_t phys_addr = 0;
  std::uint64_t cgroup = 0;
  std::uint64_t data_page_size = 0;  // 0: the page size when addr is set
  std::uint64_t code_page_size = 0;  // 0: the page size when ip is set
  // Entries with context markers, as PERF_SAMPLE_CALLCHAIN.
  const std::uint64_t* callchain = nullptr;
  std::uint64_t callchain_nr = 0;
  const SampleRegs* regs_user = nullptr;
  const SampleRegs* regs_intr = nullptr;
  SampleStack stack_user;
};

struct SampleData {
  // Supplied by the PMU (zero when it has nothing). The fields of a sample's head (IDENTIFIER to
  // PERIOD) are each one u64 word here, laid out as the record has them (pid and tid, cpu and its
  // reserved half), so that an event's SamplePlan copies them by offset (sample_plan.hpp).
  std::uint64_t ip = 0;
  std::uint64_t addr = 0;
  std::uint64_t period = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::uint32_t cpu = 0;
  std::uint32_t cpu_reserved = 0;  // the CPU field's second half: always 0
  // The event's ids, filled by output_sample.
  std::uint64_t id = 0;
  std::uint64_t stream_id = 0;
  // The event's clock at the overflow: perf_event_overflow reads it once and everything the
  // overflow writes (the sample, THROTTLE, the READ times) uses that one reading.
  std::uint64_t time = 0;
  std::uint16_t cpumode = PERF_RECORD_MISC_USER;
  RawRecord* raw = nullptr;
  const SampleExtras* extras = nullptr;  // nullptr: the defaults of SampleExtras

  const SampleExtras& extra() const {
    static constexpr SampleExtras kNone{};
    return extras != nullptr ? *extras : kNone;
  }
};

}  // namespace userperf::core
