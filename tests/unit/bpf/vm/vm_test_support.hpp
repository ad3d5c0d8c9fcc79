// Helpers for the interpreter's tests: assemble, load and run in one call.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "bpf/isa/assembler.hpp"
#include "bpf/vm/interpreter.hpp"

namespace userperf::bpf::testing {

inline std::unique_ptr<Interpreter> load_asm(std::string_view text,
                                             InterpreterOptions options = {}) {
  auto insns = assemble(text);
  EXPECT_TRUE(insns.ok()) << (insns.ok() ? "" : insns.error().message);
  if (!insns.ok()) return nullptr;
  auto interpreter = Interpreter::load(*insns, std::move(options));
  EXPECT_TRUE(interpreter.ok()) << (interpreter.ok() ? "" : interpreter.error().message);
  return interpreter.ok() ? std::move(*interpreter) : nullptr;
}

inline MemoryRegion region_of(void* p, std::size_t size, bool writable) {
  auto begin = reinterpret_cast<std::uintptr_t>(p);
  return {begin, begin + size, writable};
}

// Runs `text` with r1 = `memory` (writable) and r2 = its size.
inline RunResult run_asm(std::string_view text, std::vector<std::uint8_t>* memory = nullptr,
                         InterpreterOptions options = {}) {
  auto interpreter = load_asm(text, std::move(options));
  if (!interpreter) return RunResult{RunStatus::kFault, 0xdead, 0, 0};
  if (memory == nullptr) return interpreter->run(0, 0, {}, nullptr);
  MemoryRegion region = region_of(memory->data(), memory->size(), true);
  return interpreter->run(region.begin, memory->size(), {&region, 1}, nullptr);
}

// r0 of a run that must end with kOk.
inline std::uint64_t r0_of(std::string_view text, std::vector<std::uint8_t>* memory = nullptr) {
  RunResult result = run_asm(text, memory);
  EXPECT_EQ(result.status, RunStatus::kOk)
      << to_string(result.status) << " at " << result.pc << "\n"
      << text;
  return result.r0;
}

}  // namespace userperf::bpf::testing
