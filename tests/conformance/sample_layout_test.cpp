// PERF_RECORD_SAMPLE layout, kernel vs userperf (kernel-perf-spec §2.3/2.4, kernel-oracle.md §1):
// every sample_type bit alone and full combinations on a cpu-clock event of the calling thread.
// Layouts (field names, offsets, sizes from abi::parse_sample) must match exactly; values are
// checked symbolically (pid/tid, ids, defaults) because the two sample at different moments.
#include <asm/perf_regs.h>
#include <unistd.h>

#include <bit>
#include <memory>
#include <string>
#include <vector>

#include "conformance/kernel_support.hpp"

namespace userperf::conformance {
namespace {

constexpr std::uint64_t kRegsMask = (1ULL << PERF_REG_X86_AX) | (1ULL << PERF_REG_X86_BP) |
                                    (1ULL << PERF_REG_X86_SP) | (1ULL << PERF_REG_X86_IP);
// Scattered bits, to see the ascending-bit order: AX CX SP IP R8 R15.
constexpr std::uint64_t kScatteredRegs = (1ULL << PERF_REG_X86_AX) | (1ULL << PERF_REG_X86_CX) |
                                         (1ULL << PERF_REG_X86_SP) | (1ULL << PERF_REG_X86_IP) |
                                         (1ULL << PERF_REG_X86_R8) | (1ULL << PERF_REG_X86_R15);
constexpr std::uint64_t kDataSrcNotAvailable = 0x1e05080021;
constexpr std::uint64_t kReadAll = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
                                   PERF_FORMAT_ID | PERF_FORMAT_LOST;
constexpr std::size_t kWantedSamples = 3;
constexpr int kBitCount = 25;  // PERF_SAMPLE_IP .. PERF_SAMPLE_WEIGHT_STRUCT

struct Observation {
  int open_error = 0;  // errno of perf_event_open (0: opened)
  perf_event_attr attr{};
  std::uint64_t id = 0;
  std::uint64_t sibling_id = 0;
  std::vector<Rec> samples;
  std::string failure;  // why nothing was collected
};

// Opens attr (plus a counting task-clock sibling with the same read_format), samples the calling
// thread until kWantedSamples samples are in the ring, and returns them.
Observation collect(Target target, const perf_event_attr& attr, bool with_sibling) {
  const Perf perf(target);
  Observation o;
  o.attr = attr;
  Event leader(perf, attr);
  if (!leader.ok()) {
    o.open_error = leader.error();
    return o;
  }
  std::unique_ptr<Event> sibling;
  if (with_sibling) {
    perf_event_attr s = clock_attr(0, 0, PERF_COUNT_SW_TASK_CLOCK);
    s.read_format = attr.read_format;
    s.disabled = 0;
    sibling = std::make_unique<Event>(perf, s, 0, -1, leader.fd());
    if (!sibling->ok()) {
      o.failure = std::string("sibling open: ") + strerror(sibling->error());
      return o;
    }
    o.sibling_id = sibling->id();
  }
  Ring ring(perf, leader.fd(), 16);
  if (!ring.ok()) {
    o.failure = std::string("mmap: ") + strerror(ring.error());
    return o;
  }
  o.id = leader.id();
  leader.ioctl(PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
  std::uint64_t seen = 0;
  std::size_t count = 0;
  burn_until(
      [&] {
        if (ring.head() == seen) return false;
        seen = ring.head();
        count = of_type(ring.peek(), PERF_RECORD_SAMPLE).size();
        return count >= kWantedSamples;
      },
      2000);
  leader.ioctl(PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
  const std::vector<Rec> records = ring.drain();
  o.samples = of_type(records, PERF_RECORD_SAMPLE);
  if (o.samples.size() != records.size()) o.failure = "records other than samples in the ring";
  if (o.samples.empty()) o.failure = "no sample within 2 s";
  return o;
}

// ---- Scenarios ---------------------------------------------------------------------------------

struct Scenario {
  std::string name;
  perf_event_attr attr;
  bool sibling = false;
};

perf_event_attr one_bit_attr(int bit) {
  perf_event_attr attr = clock_attr(1ULL << bit);
  switch (1ULL << bit) {
    case PERF_SAMPLE_CALLCHAIN:
      attr.exclude_callchain_kernel = 1;  // so the chain starts with PERF_CONTEXT_USER
      break;
    case PERF_SAMPLE_BRANCH_STACK:
      attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
      break;
    case PERF_SAMPLE_REGS_USER:
      attr.sample_regs_user = kRegsMask;
      break;
    case PERF_SAMPLE_REGS_INTR:
      attr.sample_regs_intr = kRegsMask;
      break;
    case PERF_SAMPLE_STACK_USER:
      attr.sample_stack_user = 64;
      break;
    default:
      break;
  }
  return attr;
}

// kernel-oracle.md §1: the 13-bit set, group READ with LOST, a task-clock sibling.
Scenario oracle_scenario() {
  perf_event_attr attr =
      clock_attr(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
                 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN |
                 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
  attr.read_format = kReadAll | PERF_FORMAT_GROUP;
  attr.sample_regs_user = kRegsMask;
  attr.sample_stack_user = 64;
  attr.sample_id_all = 1;
  attr.exclude_callchain_kernel = 1;
  return {"oracle-13-bits-group-read", attr, true};
}

// Every bit the kernel accepts on cpu-clock at once (WEIGHT and WEIGHT_STRUCT exclude each other;
// BRANCH_STACK is refused), with a non-group READ.
Scenario every_bit_scenario() {
  perf_event_attr attr =
      clock_attr(((1ULL << kBitCount) - 1) &
                 ~std::uint64_t{PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_WEIGHT_STRUCT});
  attr.read_format = kReadAll;
  attr.sample_regs_user = kRegsMask;
  attr.sample_regs_intr = kRegsMask;
  attr.sample_stack_user = 64;
  attr.exclude_callchain_kernel = 1;
  return {"every-applicable-bit", attr, false};
}

Scenario regs_order_scenario() {
  perf_event_attr attr = clock_attr(PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_REGS_INTR);
  attr.sample_regs_user = kScatteredRegs;
  attr.sample_regs_intr = kScatteredRegs;
  return {"regs-scattered-mask", attr, false};
}

const Observation& observe(Target target, const Scenario& s) {
  return observe_once<Observation>(target, s.name,
                                   [&] { return collect(target, s.attr, s.sibling); });
}

Scenario bit_scenario(int bit) {
  return {"bit-" + std::to_string(bit), one_bit_attr(bit), false};
}

// ---- Expectations
// --------------------------------------------------------------------------------

bool user_mode(const abi::ParsedSample& s) {
  return (s.header.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
}

// The field names each bit alone produces, after the header.
std::vector<std::string> bit_fields(std::uint64_t bit) {
  switch (bit) {
    case PERF_SAMPLE_IP:
      return {"ip"};
    case PERF_SAMPLE_TID:
      return {"pid", "tid"};
    case PERF_SAMPLE_TIME:
      return {"time"};
    case PERF_SAMPLE_ADDR:
      return {"addr"};
    case PERF_SAMPLE_READ:
      return {"read.value"};
    case PERF_SAMPLE_CALLCHAIN:
      return {"callchain.nr", "callchain.ips"};
    case PERF_SAMPLE_ID:
      return {"id"};
    case PERF_SAMPLE_CPU:
      return {"cpu", "cpu_reserved"};
    case PERF_SAMPLE_PERIOD:
      return {"period"};
    case PERF_SAMPLE_STREAM_ID:
      return {"stream_id"};
    case PERF_SAMPLE_RAW:
      return {"raw.size", "raw.data"};
    case PERF_SAMPLE_REGS_USER:
      return {"regs_user.abi", "regs_user.regs"};
    case PERF_SAMPLE_STACK_USER:
      return {"stack_user.size", "stack_user.data", "stack_user.dyn_size"};
    case PERF_SAMPLE_WEIGHT:
      return {"weight"};
    case PERF_SAMPLE_DATA_SRC:
      return {"data_src"};
    case PERF_SAMPLE_IDENTIFIER:
      return {"identifier"};
    case PERF_SAMPLE_TRANSACTION:
      return {"transaction"};
    case PERF_SAMPLE_REGS_INTR:
      return {"regs_intr.abi", "regs_intr.regs"};
    case PERF_SAMPLE_PHYS_ADDR:
      return {"phys_addr"};
    case PERF_SAMPLE_AUX:
      return {"aux.size"};
    case PERF_SAMPLE_CGROUP:
      return {"cgroup"};
    case PERF_SAMPLE_DATA_PAGE_SIZE:
      return {"data_page_size"};
    case PERF_SAMPLE_CODE_PAGE_SIZE:
      return {"code_page_size"};
    case PERF_SAMPLE_WEIGHT_STRUCT:
      return {"weight_struct"};
    default:
      return {};
  }
}

std::vector<std::string> names(const std::vector<abi::SampleField>& fields) {
  std::vector<std::string> out;
  for (const abi::SampleField& f : fields) out.emplace_back(f.name);
  return out;
}

// PERIOD: the kernel reports the attr's period even when the hrtimer is clamped or late. userperf
// samples on CPU-time timers that expire on scheduler ticks (4 ms here): one signal then stands
// for every period that elapsed and PERIOD says so (src/pmu/clock/clock_timer.cpp) — an intended
// difference, so userperf's value is a whole multiple of the attr's period.
void expect_period(Target target, const abi::ParsedSample& s, const perf_event_attr& attr) {
  if (target == Target::kKernel) {
    EXPECT_EQ(s.period, attr.sample_period);
  } else {
    EXPECT_GE(s.period, attr.sample_period);
    EXPECT_EQ(s.period % attr.sample_period, 0u) << s.period;
  }
}

// Symbolic checks of the fields present in `s`, shared by every scenario.
void expect_values(Target target, const Observation& o, const Rec& rec,
                   const abi::ParsedSample& s) {
  const std::uint64_t type = o.attr.sample_type;
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_CONF));
  const std::uint16_t cpumode = s.header.misc & PERF_RECORD_MISC_CPUMODE_MASK;
  EXPECT_TRUE(cpumode == PERF_RECORD_MISC_USER || cpumode == PERF_RECORD_MISC_KERNEL) << cpumode;
  EXPECT_EQ(s.header.misc & ~PERF_RECORD_MISC_CPUMODE_MASK, 0) << s.header.misc;
  if (type & PERF_SAMPLE_IDENTIFIER) {
    EXPECT_EQ(s.identifier, o.id);
  }
  if (type & PERF_SAMPLE_IP) {
    EXPECT_NE(s.ip, 0u);
  }
  if (type & PERF_SAMPLE_TID) {
    EXPECT_EQ(s.pid, static_cast<std::uint32_t>(getpid()));
    EXPECT_EQ(s.tid, static_cast<std::uint32_t>(this_tid()));
  }
  // TIME: the kernel's local_clock and userperf's CLOCK_MONOTONIC differ; presence only.
  if (type & PERF_SAMPLE_ADDR) {
    EXPECT_EQ(s.addr, 0u);
  }
  if (type & PERF_SAMPLE_ID) {
    EXPECT_EQ(s.id, o.id);
  }
  if (type & PERF_SAMPLE_STREAM_ID) {
    EXPECT_EQ(s.stream_id, o.id);
  }
  // CPU: whichever CPU the thread ran on; range only.
  if (type & PERF_SAMPLE_CPU) {
    EXPECT_LT(s.cpu, static_cast<std::uint32_t>(cpus));
    EXPECT_EQ(s.cpu_reserved, 0u);
  }
  if (type & PERF_SAMPLE_PERIOD) expect_period(target, s, o.attr);
  if (type & PERF_SAMPLE_READ) {
    const std::uint64_t rf = o.attr.read_format;
    const std::size_t members = (rf & PERF_FORMAT_GROUP) ? (o.sibling_id != 0 ? 2 : 1) : 1;
    EXPECT_EQ(s.read.nr, members);
    ASSERT_EQ(s.read.entries.size(), members);
    if (rf & PERF_FORMAT_ID) {
      EXPECT_EQ(s.read.entries[0].id, o.id);
      if (members == 2) {
        EXPECT_EQ(s.read.entries[1].id, o.sibling_id);
      }
    }
    for (const abi::ReadEntry& e : s.read.entries) EXPECT_EQ(e.lost, 0u);
    if ((rf & PERF_FORMAT_TOTAL_TIME_ENABLED) && (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)) {
      EXPECT_GE(s.read.time_enabled, s.read.time_running);
    }
  }
  if (type & PERF_SAMPLE_CALLCHAIN) {
    ASSERT_GE(s.callchain.size(), 2u);
    EXPECT_EQ(s.callchain[0], static_cast<std::uint64_t>(PERF_CONTEXT_USER));
    if ((type & PERF_SAMPLE_IP) && user_mode(s)) {
      EXPECT_EQ(s.callchain[1], s.ip);
    }
  }
  if (type & PERF_SAMPLE_RAW) {
    // No raw data: size 4 and 4 zero bytes.
    ASSERT_EQ(s.raw_size, 4u);
    ASSERT_EQ(s.raw.size, 4u);
    EXPECT_EQ(rec.at<std::uint32_t>(s.raw.offset), 0u);
  }
  if (type & PERF_SAMPLE_REGS_USER) {
    EXPECT_EQ(s.regs_user.abi, static_cast<std::uint64_t>(PERF_SAMPLE_REGS_ABI_64));
    EXPECT_EQ(s.regs_user.values.size(),
              static_cast<std::size_t>(std::popcount(o.attr.sample_regs_user)));
  }
  if (type & PERF_SAMPLE_STACK_USER) {
    EXPECT_EQ(s.stack_size, o.attr.sample_stack_user);
    EXPECT_EQ(s.stack_dyn_size, o.attr.sample_stack_user);
  }
  if (type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
    EXPECT_EQ(s.weight, 0u);
  }
  if (type & PERF_SAMPLE_DATA_SRC) {
    EXPECT_EQ(s.data_src, kDataSrcNotAvailable);
  }
  if (type & PERF_SAMPLE_TRANSACTION) {
    EXPECT_EQ(s.transaction, 0u);
  }
  if (type & PERF_SAMPLE_REGS_INTR) {
    EXPECT_EQ(s.regs_intr.abi, static_cast<std::uint64_t>(PERF_SAMPLE_REGS_ABI_64));
    EXPECT_EQ(s.regs_intr.values.size(),
              static_cast<std::size_t>(std::popcount(o.attr.sample_regs_intr)));
  }
  if (type & PERF_SAMPLE_PHYS_ADDR) {
    EXPECT_EQ(s.phys_addr, 0u);
  }
  // CGROUP: the kernel writes the task's cgroup id (root = 1); userperf has no cgroup to report
  // (it writes 0). Presence and size only, plus the kernel's range on the kernel half.
  if ((type & PERF_SAMPLE_CGROUP) && target == Target::kKernel) {
    EXPECT_GE(s.cgroup, 1u);
  }
  if (type & PERF_SAMPLE_DATA_PAGE_SIZE) {
    EXPECT_EQ(s.data_page_size, 0u);
  }
  if ((type & PERF_SAMPLE_CODE_PAGE_SIZE) && user_mode(s)) {
    EXPECT_EQ(s.code_page_size, kPage);
  }
  if (type & PERF_SAMPLE_AUX) {
    EXPECT_EQ(s.aux_size, 0u);
  }
}

// Parses every sample of `o` and checks it; returns the parsed samples.
std::vector<abi::ParsedSample> check_observation(Target target, const Observation& o) {
  std::vector<abi::ParsedSample> parsed;
  EXPECT_EQ(o.open_error, 0) << strerror(o.open_error);
  EXPECT_TRUE(o.failure.empty()) << o.failure;
  for (const Rec& rec : o.samples) {
    abi::ParsedSample s;
    if (!parse(rec, o.attr, s)) continue;
    expect_values(target, o, rec, s);
    parsed.push_back(std::move(s));
  }
  EXPECT_FALSE(parsed.empty());
  return parsed;
}

class SampleLayout : public TargetTest {};

TEST_P(SampleLayout, EachBitAlone) {
  for (int bit = 0; bit < kBitCount; ++bit) {
    SCOPED_TRACE("sample_type bit " + std::to_string(bit));
    const Observation& o = observe(target(), bit_scenario(bit));
    if ((1ULL << bit) == PERF_SAMPLE_BRANCH_STACK) {
      // Software PMUs have no branch stack.
      EXPECT_EQ(o.open_error, EOPNOTSUPP) << strerror(o.open_error);
      continue;
    }
    for (const abi::ParsedSample& s : check_observation(target(), o)) {
      std::vector<std::string> expected = {"header"};
      for (const std::string& f : bit_fields(1ULL << bit)) expected.push_back(f);
      EXPECT_EQ(names(s.fields), expected) << describe(s.fields);
    }
  }
}

TEST_P(SampleLayout, OracleCombinationWithGroupRead) {
  const Observation& o = observe(target(), oracle_scenario());
  const std::vector<abi::ParsedSample> parsed = check_observation(target(), o);
  for (const abi::ParsedSample& s : parsed) {
    // 280 fixed bytes + the callchain entries (320 with 5 entries in the oracle's dump).
    EXPECT_EQ(s.header.size, 280u + 8 * s.callchain.size());
    EXPECT_EQ(s.read.entries.size(), 2u);
    if (user_mode(s)) {
      EXPECT_EQ(s.regs_user.values[3], s.ip);  // IP is the highest mask bit
    }
  }
}

TEST_P(SampleLayout, EveryApplicableBit) {
  const Observation& o = observe(target(), every_bit_scenario());
  for (const abi::ParsedSample& s : check_observation(target(), o)) {
    EXPECT_NE(s.field("cgroup"), nullptr);
    EXPECT_NE(s.field("aux.size"), nullptr);
    EXPECT_EQ(s.header.size % 8, 0);
  }
}

TEST_P(SampleLayout, RegsFollowTheMaskInAscendingOrder) {
  const Observation& o = observe(target(), regs_order_scenario());
  int user_samples = 0;
  for (const abi::ParsedSample& s : check_observation(target(), o)) {
    if (!user_mode(s)) continue;
    ++user_samples;
    ASSERT_EQ(s.regs_user.values.size(), 6u);
    EXPECT_EQ(s.regs_user.values[3], s.ip);  // AX CX SP [IP] R8 R15
    // Interrupted in user mode, REGS_INTR are the user registers.
    EXPECT_EQ(s.regs_intr.values, s.regs_user.values);
  }
  EXPECT_GT(user_samples, 0);
}

TEST_P(SampleLayout, PeriodBelowTheTimerTick) {
  // 1 ms is below the 4 ms scheduler tick that drives userperf's CPU-time timers.
  const Observation& o = observe(target(), bit_scenario(8));
  for (const abi::ParsedSample& s : check_observation(target(), o)) {
    expect_period(target(), s, o.attr);
  }
}

CONFORMANCE_TARGETS(SampleLayout);

// ---- Kernel vs userperf ----------------------------------------------------------------------

// Same field names and sizes in the same places. The callchain's depth depends on where the sample
// hit, so its size (and the offsets after it) are exempt.
void expect_same_layout(const abi::ParsedSample& k, const abi::ParsedSample& u) {
  ASSERT_EQ(names(k.fields), names(u.fields))
      << "kernel: " << describe(k.fields) << "\nuserperf: " << describe(u.fields);
  bool shifted = false;
  for (std::size_t i = 0; i < k.fields.size(); ++i) {
    const abi::SampleField& kf = k.fields[i];
    const abi::SampleField& uf = u.fields[i];
    const bool variable = std::string(kf.name) == "callchain.ips";
    if (!shifted) {
      EXPECT_EQ(kf.offset, uf.offset) << kf.name;
    }
    if (variable) {
      shifted = true;
    } else {
      EXPECT_EQ(kf.size, uf.size) << kf.name;
    }
  }
  if (!shifted) {
    EXPECT_EQ(k.header.size, u.header.size);
  }
}

void compare(const Scenario& scenario) {
  SCOPED_TRACE(scenario.name);
  const Observation& k = observe(Target::kKernel, scenario);
  const Observation& u = observe(Target::kUserperf, scenario);
  ASSERT_EQ(k.open_error, u.open_error)
      << "kernel " << strerror(k.open_error) << ", userperf " << strerror(u.open_error);
  if (k.open_error != 0) return;
  ASSERT_FALSE(k.samples.empty()) << k.failure;
  ASSERT_FALSE(u.samples.empty()) << u.failure;
  abi::ParsedSample ks;
  abi::ParsedSample us;
  ASSERT_TRUE(parse(k.samples.front(), k.attr, ks));
  ASSERT_TRUE(parse(u.samples.front(), u.attr, us));
  expect_same_layout(ks, us);
}

TEST(SampleLayoutKernelVsUserperf, EachBitAlone) {
  CONFORMANCE_REQUIRE_KERNEL();
  for (int bit = 0; bit < kBitCount; ++bit) compare(bit_scenario(bit));
}

TEST(SampleLayoutKernelVsUserperf, Combinations) {
  CONFORMANCE_REQUIRE_KERNEL();
  compare(oracle_scenario());
  compare(every_bit_scenario());
  compare(regs_order_scenario());
}

}  // namespace
}  // namespace userperf::conformance
