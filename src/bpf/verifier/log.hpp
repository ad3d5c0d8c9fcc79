// The verifier log (the kernel's kernel/bpf/log.c): what the walk reports and how it reads.
// VerifierLog owns the log levels, the level-2 trace and its size cap, the failing path kept for
// level 1 and the rejection reason; the walk only tells it where it is and why it stops. The free
// functions give the kernel's text: instructions as `print_bpf_insn` shows them and register and
// stack state as `print_verifier_state` does (`R1=ctx() R10=fp0`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bpf/isa/program_image.hpp"
#include "bpf/verifier/verifier_state.hpp"

namespace userperf::bpf {

// printf into a string of at most 255 characters (every line of the log is shorter). A C
// variadic function, so that both compilers check each call's arguments against its format.
std::string format_text(const char* f, ...) __attribute__((format(printf, 1, 2)));

// "r0 = *(u64 *)(r1 +0)"; idx selects the instruction (an lddw takes its pair).
std::string disasm_insn(std::span<const Insn> insns, std::size_t idx);
std::string format_reg(const RegState& reg, const std::vector<MapSpec>* maps);
std::string format_state(const VerifierState& state, const std::vector<MapSpec>* maps);
const char* reg_type_name(const RegState& reg);
// PTR_TO_BTF_ID's name by its BtfPtrFlag bits: "trusted_ptr_", "untrusted_ptr_or_null_", ...
const char* btf_ptr_type_name(std::uint8_t flags,
                              bool maybe_null);  // "ctx", "map_value_or_null", "scalar", ...
const char* helper_label(std::int32_t id);       // "bpf_map_lookup_elem", or "unknown"

// The walk's counters, for the log's last line.
struct WalkCounts {
  std::uint64_t processed = 0;  // instructions processed
  std::uint64_t limit = 0;      // BPF_COMPLEXITY_LIMIT_INSNS
  std::uint32_t total_states = 0;
  std::uint32_t peak_states = 0;
};

// Level 0: the rejection reason and nothing else. Level 1: on rejection, the failing path from
// where it started (the program's entry or the branch it was pushed from) to where it stopped,
// with the state at both ends. Level 2: every instruction with the state before it, every pruned
// path and every path taken from the stack (the kernel's BPF_LOG_LEVEL2), up to kTraceLimit bytes.
class VerifierLog {
 public:
  VerifierLog(std::span<const Insn> insns, const std::vector<MapSpec>* maps, std::uint32_t level)
      : insns_(insns), maps_(maps), level_(level) {}

  // ---- the walk's progress
  // A walk (the main program's, or a global function's) starts at insn `idx` in `state`.
  void walk_start(const VerifierState& state, std::uint32_t idx) {
    if (level_ < 1) return;
    path_start_ = state;
    path_from_ = path_to_ = walk_entry_ = idx;
    path_forked_ = false;
    path_insns_.clear();
  }
  // A line the kernel prints from level 1 on, not a rejection reason ("Func#1 ('f') is global and
  // assumed valid."): in the level-2 trace where it happens; at level 1 before the failing path.
  void note(const char* f, ...) __attribute__((format(printf, 2, 3)));
  // The walk is about to check insn `idx` in `state`.
  void insn(std::uint32_t idx, const VerifierState& state) {
    stopped_at_ = idx;
    if (level_ >= 2) {
      trace_insn(idx, state);
    } else if (level_ == 1) {
      keep_path_insn(idx);
    }
  }
  // The walk stopped at `idx` before checking it (too many insns, an error while pruning).
  void stopped_at(std::uint32_t idx) { stopped_at_ = idx; }
  // The path at `idx` was pruned: an equal state there was already verified.
  void pruned(std::uint32_t idx);
  // A path pushed at insn `from` continues at `to` in `state`.
  void path_start(std::uint32_t from, std::uint32_t to, const VerifierState& state);

  // ---- the rejection reason (the log's last lines before the counters)
  int reject(int err, const char* f, ...) __attribute__((format(printf, 3, 4)));
  // `reason` as it is (a message made elsewhere: ctx rewriting's Error).
  int reject_verbatim(int err, std::string reason) {
    reason_ = std::move(reason);
    return err;
  }
  // One more line for the reason.
  void add_to_reason(const char* f, ...) __attribute__((format(printf, 2, 3)));
  // One more line for the reason: `label` and the state.
  void add_state_to_reason(const char* label, const VerifierState& state);

  // The text of the whole log: `err` is the verdict (0: accepted), `last` the state where the
  // walk stopped.
  std::string finish(int err, const VerifierState& last, const WalkCounts& counts) const;

 private:
  // The level-2 trace of a 1M-instruction walk would take gigabytes: past this it stops, as the
  // kernel's log stops at the caller's log_size.
  static constexpr std::size_t kTraceLimit = 16u << 20;
  // Instructions of the failing path kept for level 1 (the older half goes when it fills up).
  static constexpr std::size_t kPathLimit = 4096;

  void trace_insn(std::uint32_t idx, const VerifierState& state);
  void keep_path_insn(std::uint32_t idx);
  std::string insn_line(std::uint32_t idx) const;  // "7: (79) r1 = *(u64 *)(r0 +0)\n"

  std::span<const Insn> insns_;
  const std::vector<MapSpec>* maps_;
  std::uint32_t level_;
  std::string trace_;   // level 2
  std::string reason_;  // why the program is rejected
  std::uint32_t stopped_at_ = 0;

  // The failing path (level 1): where it started and the instructions since.
  std::uint32_t path_from_ = 0;
  std::uint32_t path_to_ = 0;
  bool path_forked_ = false;
  std::uint32_t walk_entry_ = 0;  // where the walk of the failing path started
  VerifierState path_start_;
  std::vector<std::uint32_t> path_insns_;
};

}  // namespace userperf::bpf
