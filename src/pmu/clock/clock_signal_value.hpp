// What a clock signal carries in si_value, shared by the handler (clock_timer.cpp), the in-process
// ticker and the recorder's ticker (record/recorder/ticker.cpp), which pokes clocks of another
// process. Header-only and free of dependencies, so that the recorder needs nothing else of pmu.
#pragma once

#include <cstdint>

namespace userperf::pmu {

constexpr int kClockSlots = 4096;  // the signal value gives the slot 12 bits

// What a clock signal carries in si_value: 12 bits of slot, 20 of generation, and in a poke the
// sampled thread's CPU time when it was sent (in units of 2^20 ns, about a millisecond; 32 bits,
// 0 for none). A CPU-time timer's signal carries slot and generation (sigev_value). The handler
// counts the periods itself, from the thread's CPU clock; the CPU time at sending tells it how
// long the thread ran while the poke waited queued: a thread that ran on behind a poke blocked the
// signal, one that waited for a CPU did not.
struct ClockSignalValue {
  int slot = -1;
  std::uint32_t generation = 0;
  std::uint32_t sent_cpu = 0;
};
constexpr std::uint32_t kGenerationMask = (1u << 20) - 1;
constexpr int kSentShift = 20;  // ns >> 20: the unit of ClockSignalValue::sent_cpu

inline std::uint32_t clock_signal_stamp(std::uint64_t cpu_ns) {
  const auto stamp = static_cast<std::uint32_t>(cpu_ns >> kSentShift);
  return stamp != 0 ? stamp : 1;
}

inline void* encode_clock_signal(const ClockSignalValue& v) {
  const std::uint64_t bits = static_cast<std::uint64_t>(v.slot) |
                             static_cast<std::uint64_t>(v.generation & kGenerationMask) << 12 |
                             static_cast<std::uint64_t>(v.sent_cpu) << 32;
  return reinterpret_cast<void*>(bits);
}

inline ClockSignalValue decode_clock_signal(const void* ptr) {
  const auto bits = reinterpret_cast<std::uint64_t>(ptr);
  return {static_cast<int>(bits & (kClockSlots - 1)),
          static_cast<std::uint32_t>(bits >> 12) & kGenerationMask,
          static_cast<std::uint32_t>(bits >> 32)};
}

// A poke for the clock that ThreadStart names `clock` (slot and generation, as encode_clock_signal
// puts them in the low 32 bits), sent when its thread had used `cpu_ns` (0: not known).
inline std::uint64_t clock_poke(std::uint32_t clock, std::uint64_t cpu_ns) {
  const std::uint64_t stamp = cpu_ns == 0 ? 0 : clock_signal_stamp(cpu_ns);
  return clock | stamp << 32;
}

}  // namespace userperf::pmu
