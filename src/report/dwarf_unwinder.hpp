// Unwinds a dwarf-mode sample (PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER) with libdw's dwfl:
// the sampled registers start the walk, memory reads come from the sample's copy of the stack
// (from sp) or, outside it, from the mapped ELF files; each frame's CFI comes from the module that
// maps its pc (an ELF file placed by its PT_LOAD segments, or this machine's vdso for a "[vdso]"
// mapping of its size), reported to dwfl when first met. One dwfl per address space, kept across
// samples while the space's mappings still match its modules, for the most recently used spaces
// only (each dwfl holds its files open).
#pragma once

#include <cstdint>
#include <list>
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

  // How many address spaces keep their dwfl: a file of many short processes must not run out of
  // file descriptors.
  static constexpr std::size_t kMaxSessions = 32;

 private:
  // The session of `space`, made anew when there was none or its modules no longer match the
  // space's mappings (dlclose, then dlopen of another object at the same address).
  Session& session_for(std::uint32_t pid, const AddressSpace& space);
  void drop_session(std::uint64_t space_id);

  std::list<std::unique_ptr<Session>> sessions_;  // most recently used first
  std::unordered_map<std::uint64_t, std::list<std::unique_ptr<Session>>::iterator>
      session_of_space_;  // by AddressSpace::id
};

}  // namespace userperf::report
