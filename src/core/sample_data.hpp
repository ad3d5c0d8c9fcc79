// SampleData: what a PMU knows about one overflow (the kernel's perf_sample_data plus the
// interrupted registers). The PMU fills what it has; prepare_sample() fills defaults for the rest
// and computes the record size once.
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
  std::uint16_t cpumode = PERF_RECORD_MISC_USER;
  std::uint64_t weight = 0;
  std::uint64_t data_src = kDataSrcNotAvailable;
  std::uint64_t transaction = 0;
  std::uint64_t phys_addr = 0;
  std::uint64_t cgroup = 0;
  std::uint64_t data_page_size = 0;  // 0: the page size when addr is set
  std::uint64_t code_page_size = 0;  // 0: the page size when ip is set
  const std::uint64_t* callchain =
      nullptr;  // entries with context markers, as PERF_SAMPLE_CALLCHAIN
  std::uint64_t callchain_nr = 0;
  RawRecord* raw = nullptr;
  const SampleRegs* regs_user = nullptr;
  const SampleRegs* regs_intr = nullptr;
  SampleStack stack_user;

  // The event's clock at the overflow: perf_event_overflow reads it once and everything the
  // overflow writes (the sample, THROTTLE, the READ times) uses that one reading.
  std::uint64_t time = 0;

  // Filled by prepare_sample().
  std::uint32_t read_members = 0;   // group members in the READ field
  std::uint64_t raw_bytes = 0;      // 4 + raw->size, or 8 for the empty RAW field
  std::uint64_t stack_size = 0;     // bytes of user stack in the record (0: only the size field)
  std::uint64_t stack_dyn = 0;      // bytes actually copied
  std::uint64_t aux_available = 0;  // trace bytes the group leader holds (set before prepare)
  std::uint64_t aux_copy = 0;       // bytes of trace the sample carries
  std::uint64_t aux_size = 0;       // the AUX size field: aux_copy rounded up to 8
  std::uint32_t size = 0;           // the whole record, header included
};

}  // namespace userperf::core
