// The verifier for BPF_PROG_TYPE_PERF_EVENT programs, following the kernel's rules, and the ctx
// rewriting that turns loads from struct bpf_perf_event_data into loads from userperf's internal
// overflow context.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bpf/isa/program_image.hpp"

namespace userperf::bpf {

// Where the fields a program reads through its ctx live at run time. The program sees the uapi
// struct bpf_perf_event_data (x86-64: pt_regs regs at 0, sample_period at 168, addr at 176, size
// 184); the runtime passes a pointer to its own context instead, and each verified ctx load is
// rewritten as the kernel's pe_prog_convert_ctx_access does: load a pointer from the internal
// context, then load the field through it.
struct PerfEventCtxLayout {
  std::int16_t sample_ptr = 0;  // offset of the sample pointer in the internal context
  std::int16_t period = 0;      // offset of the u64 period in the sample
  std::int16_t addr = 0;        // offset of the u64 addr in the sample
  std::int16_t regs_ptr = 0;    // offset of the registers pointer in the internal context
  // For each 8-byte slot of pt_regs (index = uapi offset / 8): the slot's offset in the
  // registers block, or -1 when userperf has no such register (the load yields 0).
  std::int16_t regs[21] = {};
};

struct VerifyOptions {
  std::uint32_t prog_type = BPF_PROG_TYPE_PERF_EVENT;
  bool gpl_compatible = false;                     // from the object's license
  const std::vector<MapSpec>* maps = nullptr;      // what BPF_PSEUDO_MAP_IDX* references index
  const PerfEventCtxLayout* ctx_layout = nullptr;  // nullptr: leave ctx loads as they are
  std::uint32_t log_level = 1;  // 0: only the rejection reason; 1: + the path; 2: every insn
  // The kernel's struct types (ObjectImage::kernel_btf): what loads through BTF-typed pointers
  // (bpf_get_current_task_btf, bpf_find_vma's vma) are checked against. nullptr or empty: those
  // helpers are refused (no kernel BTF).
  const KernelBtfTypes* kernel_btf = nullptr;
  // Instructions the walk may process before it rejects the program with E2BIG: the kernel's
  // BPF_COMPLEXITY_LIMIT_INSNS. Only the fuzz targets lower it (a walk to the kernel's limit
  // takes seconds here, under the sanitizers tens of seconds).
  std::uint64_t insn_limit = 1000000;
};

struct VerifyResult {
  bool accepted = false;
  int error = 0;    // the errno the kernel's BPF_PROG_LOAD returns on rejection (EACCES, EINVAL...)
  std::string log;  // kernel-style: instruction index, register state, reason
  std::vector<Insn> insns;  // accepted: the program with ctx loads rewritten, and loads through
                            // BTF pointers marked as probe loads (mode kModeProbeMem)
  std::uint64_t processed_insns = 0;
  std::uint32_t peak_states = 0;
  std::uint32_t stack_depth = 0;  // deepest combined stack use over the call chains
  // Accepted: each function's own depth (main first, then the subprograms and callbacks by
  // start), what the kernel prints as "stack depth N+M+..." and the JIT sizes frames from.
  std::vector<FunctionStack> function_stacks;
};

VerifyResult verify(const ProgramImage& program, const VerifyOptions& options);

}  // namespace userperf::bpf
