// Unwinds a dwarf-mode sample (PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER) with libdw's dwfl:
// the sampled registers start the walk, memory reads come from the sample's copy of the stack
// (from sp) or, outside it, from the mapped ELF files; each frame's CFI comes from the module that
// maps its pc, reported to dwfl when first met. One dwfl per address space, kept across samples.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "report/address_space.hpp"
#include "report/user_regs.hpp"

namespace userperf::report {

struct UnwoundFrame {
  std::uint64_t pc = 0;
  bool activation = false;  // the sampled pc itself; false: a return address (look up pc - 1)
};

class DwarfUnwinder {
 public:
  DwarfUnwinder();
  ~DwarfUnwinder();
  DwarfUnwinder(const DwarfUnwinder&) = delete;
  DwarfUnwinder& operator=(const DwarfUnwinder&) = delete;

  // The frames of `pid`'s user stack, innermost first; at least the sampled ip when the registers
  // hold one, at most `max_frames`. `stack` is the valid part of the dump (dyn_size bytes from sp).
  std::vector<UnwoundFrame> unwind(std::uint32_t pid, const AddressSpace& space,
                                   const UserRegs& regs, std::span<const std::uint8_t> stack,
                                   std::size_t max_frames);

  struct Session;  // a dwfl and what its callbacks read (dwarf_unwinder.cpp)

 private:
  std::unordered_map<std::uint64_t, std::unique_ptr<Session>> sessions_;  // by AddressSpace::id
};

}  // namespace userperf::report
