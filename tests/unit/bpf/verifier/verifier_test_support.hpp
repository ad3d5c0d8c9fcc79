// Shared fixtures for the verifier tests: programs in the assembler's syntax, a fixed set of maps
// (referenced as `map:NAME`), and verdict checks that print the log on failure.
#pragma once

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

#include "bpf/isa/assembler.hpp"
#include "bpf/verifier/verifier.hpp"
#include "support/kernel_bpf.hpp"

namespace userperf::bpf::verifier_test {

inline std::vector<MapSpec> test_maps() {
  std::vector<MapSpec> maps;
  auto add = [&](const char* name, std::uint32_t type, std::uint32_t key, std::uint32_t value,
                 std::uint32_t entries) -> MapSpec& {
    MapSpec m;
    m.name = name;
    m.type = type;
    m.key_size = key;
    m.value_size = value;
    m.max_entries = entries;
    maps.push_back(m);
    return maps.back();
  };
  add("hash", BPF_MAP_TYPE_HASH, 4, 8, 16);
  add("array", BPF_MAP_TYPE_ARRAY, 4, 16, 4);
  add("events", BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 0);
  add("stacks", BPF_MAP_TYPE_STACK_TRACE, 4, 8 * 127, 16);
  MapSpec& rodata = add(".rodata", BPF_MAP_TYPE_ARRAY, 4, 8, 1);
  rodata.global_data = true;
  rodata.map_flags = BPF_F_RDONLY_PROG;
  rodata.initial_value = {7, 0, 0, 0, 0, 0, 0, 0};
  MapSpec& bss = add(".bss", BPF_MAP_TYPE_ARRAY, 4, 16, 1);
  bss.global_data = true;
  bss.initial_value.assign(16, 0);
  add("queue", BPF_MAP_TYPE_QUEUE, 0, 8, 16);
  add("progs", BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4);
  add("ring", BPF_MAP_TYPE_RINGBUF, 0, 0, 4096);
  // Map-in-map: an ARRAY_OF_MAPS of 16-byte-value arrays, a HASH_OF_MAPS (u64 keys) of hashes.
  MapSpec array_inner;
  array_inner.name = "array_of_maps.inner";
  array_inner.type = BPF_MAP_TYPE_ARRAY;
  array_inner.key_size = 4;
  array_inner.value_size = 16;
  array_inner.max_entries = 8;
  add("array_of_maps", BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 4).inner_map.push_back(array_inner);
  MapSpec hash_inner = array_inner;
  hash_inner.name = "hash_of_maps.inner";
  hash_inner.type = BPF_MAP_TYPE_HASH;
  hash_inner.value_size = 8;
  add("hash_of_maps", BPF_MAP_TYPE_HASH_OF_MAPS, 8, 4, 16).inner_map.push_back(hash_inner);
  return maps;
}

inline const std::vector<MapSpec>& shared_maps() {
  static const std::vector<MapSpec> maps = test_maps();
  return maps;
}

inline std::vector<Insn> assemble_or_fail(std::string_view text) {
  AssembleOptions options;
  options.map_index = [](std::string_view name) -> std::optional<std::uint32_t> {
    const auto& maps = shared_maps();
    for (std::size_t i = 0; i < maps.size(); ++i) {
      if (maps[i].name == name) return static_cast<std::uint32_t>(i);
    }
    return std::nullopt;
  };
  auto insns = assemble(text, options);
  EXPECT_TRUE(insns.ok()) << (insns.ok() ? "" : insns.error().message) << "\n" << text;
  return insns.ok() ? *insns : std::vector<Insn>{};
}

// What the running kernel says about the same program (the oracle these tests follow).
struct KernelVerdict {
  bool available = false;  // false: bpf() refused here, nothing to compare
  bool accepted = false;
  int error = 0;
  std::string log;
};

inline KernelVerdict kernel_verdict(const ProgramImage& program, bool gpl) {
  ObjectImage image;
  image.license = gpl ? "GPL" : "Proprietary";
  image.maps = shared_maps();
  image.programs.push_back(program);
  const auto loaded = testing::kernel_bpf::load_image_program(image, 0, BPF_PROG_TYPE_PERF_EVENT);
  KernelVerdict verdict;
  if (testing::kernel_bpf::kernel_refuses_bpf(loaded.error)) return verdict;
  verdict.available = true;
  verdict.accepted = loaded.error == 0;
  verdict.error = loaded.error;
  verdict.log = loaded.log;
  return verdict;
}

// Our verdict, with the kernel's beside it for the checks below.
struct Outcome : VerifyResult {
  KernelVerdict kernel;
};

inline Outcome verify_insns(std::vector<Insn> insns, bool gpl = true,
                            const PerfEventCtxLayout* layout = nullptr,
                            std::uint32_t log_level = 1) {
  ProgramImage program;
  program.name = "test";
  program.section = "perf_event";
  program.prog_type = BPF_PROG_TYPE_PERF_EVENT;
  program.insns = std::move(insns);
  VerifyOptions options;
  options.gpl_compatible = gpl;
  options.maps = &shared_maps();
  options.ctx_layout = layout;
  options.log_level = log_level;
  Outcome outcome;
  static_cast<VerifyResult&>(outcome) = verify(program, options);
  outcome.kernel = kernel_verdict(program, gpl);
  return outcome;
}

inline Outcome verify_text(std::string_view text, bool gpl = true) {
  return verify_insns(assemble_or_fail(text), gpl);
}

// The kernel, where it can be asked, must give the same verdict and errno.
inline ::testing::AssertionResult kernel_agrees(const Outcome& r) {
  if (!r.kernel.available) return ::testing::AssertionSuccess();
  if (r.kernel.accepted == r.accepted && (r.accepted || r.kernel.error == r.error)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "the kernel disagrees: kernel " << (r.kernel.accepted ? "accepts" : "rejects")
         << " (errno " << r.kernel.error << "), userperf " << (r.accepted ? "accepts" : "rejects")
         << " (errno " << r.error << ")\nkernel log:\n"
         << r.kernel.log << "\nuserperf log:\n"
         << r.log;
}

// The verdict and, for rejections, the errno and a part of the kernel's message.
inline ::testing::AssertionResult accepted(const VerifyResult& r) {
  if (!r.accepted) {
    return ::testing::AssertionFailure() << "rejected (errno " << r.error << "):\n" << r.log;
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult rejected(const VerifyResult& r, int err, std::string_view msg) {
  if (r.accepted) return ::testing::AssertionFailure() << "accepted:\n" << r.log;
  if (r.error != err) {
    return ::testing::AssertionFailure() << "errno " << r.error << ", want " << err << ":\n"
                                         << r.log;
  }
  if (r.log.find(msg) == std::string::npos) {
    return ::testing::AssertionFailure() << "log lacks \"" << msg << "\":\n" << r.log;
  }
  return ::testing::AssertionSuccess();
}

// The same, and the kernel gives the same verdict.
inline ::testing::AssertionResult accepted(const Outcome& r) {
  auto ours = accepted(static_cast<const VerifyResult&>(r));
  return ours ? kernel_agrees(r) : ours;
}

inline ::testing::AssertionResult rejected(const Outcome& r, int err, std::string_view msg) {
  auto ours = rejected(static_cast<const VerifyResult&>(r), err, msg);
  return ours ? kernel_agrees(r) : ours;
}

}  // namespace userperf::bpf::verifier_test
