#include "pmu/clock/software_pmu.hpp"

#include <cerrno>
#include <memory>

#include "abi/attr_rules.hpp"
#include "pmu/clock/clock_timer.hpp"

namespace userperf::pmu {

namespace {

constexpr std::uint64_t kNsecPerSec = 1'000'000'000;

bool is_clock(const core::Event& event) {
  return event.attr.config == PERF_COUNT_SW_CPU_CLOCK ||
         event.attr.config == PERF_COUNT_SW_TASK_CLOCK;
}

ClockTimer* timer_of(core::Event& event) {
  return reinterpret_cast<ClockTimer*>(event.pmu_private);
}

}  // namespace

SoftwarePmu::SoftwarePmu(core::Engine& engine) : engine_(engine) {}

int SoftwarePmu::event_init(core::Event& event) {
  if (const int err = abi::check_software_event(event.attr); err != 0) return err;
  if (!is_clock(event)) return 0;
  // perf_swevent_init_hrtimer: a frequency becomes the fixed period 1e9 / freq.
  if (event.attr.freq && event.attr.sample_freq != 0) {
    event.attr.sample_period = kNsecPerSec / event.attr.sample_freq;
    event.attr.freq = 0;
    event.sample_period.store(event.attr.sample_period);
  }
  return 0;
}

int SoftwarePmu::event_bind(core::Event& event) {
  switch (event.attr.config) {
    case PERF_COUNT_SW_CPU_CLOCK:
    case PERF_COUNT_SW_TASK_CLOCK:
      break;
    case PERF_COUNT_SW_DUMMY:
    case PERF_COUNT_SW_BPF_OUTPUT:
      return 0;
    default:
      // Page faults, context switches, migrations...: the kernel counts them; userperf cannot
      // observe them from user space.
      return -EOPNOTSUPP;
  }
  // A clock samples a thread on that thread's CPU-time clock; a CPU-wide clock would need every
  // thread of the system.
  if (event.pid == -1) return -EOPNOTSUPP;
  auto timer = std::make_unique<ClockTimer>();
  if (const int err = clock_timer_create(engine_, event, event.pid, *timer); err != 0) return err;
  event.pmu_private = reinterpret_cast<std::uint64_t>(timer.release());
  return 0;
}

int SoftwarePmu::add(core::Event& event) {
  if (!is_clock(event) || event.attr.sample_period == 0) return 0;
  return clock_timer_arm(*timer_of(event), event.sample_period.load());
}

void SoftwarePmu::del(core::Event& event) {
  if (is_clock(event) && timer_of(event) != nullptr) clock_timer_disarm(*timer_of(event));
}

void SoftwarePmu::period_changed(core::Event& event) {
  if (is_clock(event) && event.state.load() == core::EventState::kActive) add(event);
}

void SoftwarePmu::destroy(core::Event& event) {
  ClockTimer* timer = timer_of(event);
  if (timer == nullptr) return;
  clock_timer_destroy(*timer);
  delete timer;
  event.pmu_private = 0;
}

}  // namespace userperf::pmu
