// The verifier's Checker (private to bpf/verifier): one verification of one program, its walk
// state and the checks each instruction class gets. The class is declared here and defined by
// concern, one file each:
//   verifier.cpp       verify(): the pre-walk checks, the walk, the stack depth, ctx rewriting
//   walk.cpp           the walk itself (do_check): dispatch per instruction, pending paths
//   state_pruning.cpp  state comparison at prune points, checkpoints, precision propagation
//   alu_jumps.cpp      ALU (scalars and pointer arithmetic) and conditional jumps
//   memory_access.cpp  loads, stores and atomics: stack, map value, ctx, alignment; lddw
//   btf_access.cpp     loads through BTF pointers (PTR_TO_BTF_ID), the task and vma helpers
//   calls.cpp          helper calls, subprogram calls, callbacks, exit, references, stack depth
//   helper_args.cpp    a helper call's arguments against its prototype, map compatibility
// The log it writes is VerifierLog's (log.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bpf/verifier/helper_protos.hpp"
#include "bpf/verifier/log.hpp"
#include "bpf/verifier/precision.hpp"
#include "bpf/verifier/program_shape.hpp"
#include "bpf/verifier/verifier.hpp"
#include "bpf/verifier/verifier_state.hpp"

namespace userperf::bpf {

inline constexpr std::size_t kJmpSeqLimit = 8192;  // BPF_COMPLEXITY_LIMIT_JMP_SEQ

// Which pointer each load or store went through on the paths so far (its ctx loads are
// rewritten, so it must see the ctx on every path or on none).
// kBtf: through a BTF pointer, a probe load (kModeProbeMem) in the result.
enum class PtrUse : std::uint8_t { kUnseen, kCtx, kBtf, kOther };

// One step of btf_struct_walk (btf_access.cpp): a scalar, a pointer to struct `next` (the member
// `field` of struct `owner`, flags from its type tag and any union walked), or a nested struct
// `next` that starts at the offset.
struct BtfWalkStep {
  enum Kind : std::uint8_t { kScalar, kPtr, kStruct } kind = kScalar;
  std::uint32_t next = 0;
  std::uint32_t owner = 0;
  const std::string* field = nullptr;
  std::uint8_t flags = 0;
};

// How states_equal compares: kNotExact as pruning does (imprecise scalars match anything);
// kRangeWithin: every scalar's range must contain the current one (callback iterations, whose
// precision is not settled yet); kExact: identical (infinite loops).
enum class StateCompare : std::uint8_t { kNotExact, kRangeWithin, kExact };

// A path pushed at a conditional jump, to be walked when the current one ends.
struct PendingPath {
  VerifierState state;
  Checkpoint* parent = nullptr;
  std::uint32_t insn_idx = 0;
  std::uint32_t from_idx = 0;
  std::int32_t history = -1;
};

// The maps a walk knows (options.maps): the object's first, then the inner template of each
// map-in-map (the kernel's map->inner_map_meta), which a NULL-checked lookup of the outer map
// points to. lddw references only the object's.
struct WalkMaps {
  std::size_t object_maps = 0;
  std::vector<std::int16_t> inner_of;  // by object map: its template's index, -1: none
};

class Checker {
 public:
  Checker(std::span<const Insn> insns, const VerifyOptions& options, VerifyResult& result,
          bool btf_func_info, WalkMaps walk_maps, std::span<const BtfFunc> btf_funcs = {})
      : insns_(insns),
        options_(options),
        btf_func_info_(btf_func_info),
        walk_maps_(std::move(walk_maps)),
        btf_funcs_(btf_funcs),
        result_(result),
        log_(insns, options.maps, options.log_level) {}

  // Verifies; the result gets the verdict's details and the log.
  int run() {
    const int err = run_checks();
    // The log is built after the walk so that it describes the state where it stopped.
    result_.log =
        log_.finish(err, cur_, {processed_, options_.insn_limit, total_states_, peak_states_});
    result_.processed_insns = processed_;
    result_.peak_states = peak_states_;
    return err;
  }

 private:
  // ---- verifier.cpp
  int run_checks();

  // ---- walk.cpp: the walk
  int walk(std::uint32_t start);
  void end_path();
  int push_branch(std::uint32_t target, std::uint32_t from);
  // ... and the registers
  FuncState& frame() { return cur_.cur(); }
  RegState& reg(int r) { return cur_.cur().regs[static_cast<std::size_t>(r)]; }
  int check_read(int r);
  int check_write(int r);
  const MapSpec& map_of(const RegState& r) const {
    return (*options_.maps)[static_cast<std::size_t>(r.map)];
  }

  // ---- state_pruning.cpp: pruning
  int is_state_visited(std::uint32_t idx, bool& pruned);
  bool states_equal(const VerifierState& o, const VerifierState& c, std::uint32_t idx,
                    StateCompare mode);
  // ... and precision
  void need_precise_reg(int r);
  void need_precise_slot(std::uint8_t frame, std::size_t spi);
  void propagate_precision(const VerifierState& old, std::uint32_t idx);

  // ---- alu_jumps.cpp: ALU
  int do_alu(const Insn& in);
  int do_alu_mov(const Insn& in);
  int adjust_ptr(const Insn& in, const RegState& ptr, const RegState& off, RegState& dst,
                 bool dst_is_off);
  bool sane_offset(const RegState& r, const RegState& ptr_type_of, int& err);
  // ... and conditional jumps
  int do_cond_jmp(std::uint32_t idx, const Insn& in, std::uint32_t& next);
  void mark_null_checked(std::uint32_t id, bool is_null);
  void sync_linked(std::uint32_t id, const RegState& known);

  // ---- memory_access.cpp
  int do_ldx(std::uint32_t idx, const Insn& in);
  int do_store(std::uint32_t idx, const Insn& in);
  int do_atomic(std::uint32_t idx, const Insn& in);
  int do_lddw(const Insn& in, const Insn& hi);
  // value: the loaded value out (reads) or stored in (writes); nullptr for a store of `imm`.
  // strict_alignment_once: an atomic's access, aligned to its size whatever the pointer.
  int check_mem_access(std::uint32_t idx, int regno, int off, int size, bool write,
                       const RegState* store_value, std::int32_t imm, bool is_st,
                       RegState* load_out, bool sign_extend, bool strict_alignment_once = false);
  int check_ptr_alignment(const RegState& ptr, int off, int size, bool strict_alignment_once);
  // check_ptr_off_reg for ctx: the pointer in `regno` as the program got it, no offset added.
  int check_ctx_ptr_unmodified(int regno);
  int check_ctx_access(int regno, int off, int size, bool write);
  int check_stack_bounds(int regno, const RegState& ptr, int off, int size, const char* what,
                         std::int64_t& min_off, std::int64_t& max_off);
  void note_stack_depth(const RegState& ptr, std::int64_t min_off);
  int check_map_value_access(int regno, const RegState& ptr, int off, int size, bool write,
                             bool zero_ok);
  int check_mem_region_access(int regno, const RegState& ptr, int off, int size,
                              std::uint32_t mem_size, bool zero_ok);
  StackSlot& slot(FuncState& f, std::size_t spi);

  // ---- btf_access.cpp: PTR_TO_BTF_ID (check_ptr_to_btf_access, btf_struct_access)
  int check_ptr_to_btf_access(int regno, const RegState& ptr, int off, int size, bool write,
                              RegState& value);
  int btf_struct_walk(std::uint32_t type, std::uint32_t off, int size, BtfWalkStep& out);
  RegState current_task_btf() const;
  int check_task_arg(int regno);
  void stack_write_fixed(FuncState& f, int off, int size, const RegState* value, bool is_st,
                         std::int32_t imm);
  int stack_read_fixed(FuncState& f, int off, int size, RegState& out);
  void stack_mark_misc(FuncState& f, std::int64_t min_off, std::int64_t max_off, bool zero);

  // ---- calls.cpp
  int do_call(std::uint32_t idx, const Insn& in, std::uint32_t& next);
  int do_local_call(std::uint32_t idx, const Insn& in, std::uint32_t& next);
  int do_exit(std::uint32_t& next, bool& path_end);
  int push_callback(std::uint32_t idx, std::int16_t callback, std::int32_t helper);
  int exit_callback(std::uint32_t& next);
  void widen_imprecise_scalars(const VerifierState& old, VerifierState& cur);
  struct CallMeta {
    std::int16_t callback = -1;  // ARG_PTR_TO_FUNC: the subprogram
    int map = -1;
    std::int64_t const_map_key = -1;
    int mem_regno = -1;
    bool mem_write = false;
    std::uint64_t msize_max = 0;
    int raw_regno = -1;
    std::uint64_t raw_size = 0;
    std::uint64_t alloc_size = 0;   // ARG_CONST_ALLOC_SIZE_OR_ZERO's value
    std::uint32_t release_ref = 0;  // the reference an OBJ_RELEASE argument gives back
  };
  // Reference tracking (the kernel's acquire_reference / release_reference /
  // check_reference_leak): ringbuf records.
  std::uint32_t acquire_reference(std::uint32_t insn_idx);
  void release_reference(std::uint32_t ref_obj_id);
  int check_reference_leak();
  int check_max_stack_depth();

  // ---- helper_args.cpp
  int check_helper_arg(int regno, ArgType type, CallMeta& meta, ArgType prev);
  int check_helper_mem(int regno, std::uint64_t size, bool write, bool zero_ok, CallMeta& meta,
                       const char* what = " indirect access to");
  void mark_stack_written(const CallMeta& meta);
  int check_map_compat(int map_index, std::int32_t helper);
  int check_get_func_ip(std::int32_t id);
  std::int64_t const_map_key(const RegState& key, std::uint32_t key_size);

  // ---- global_funcs.cpp: global (BTF_FUNC_GLOBAL) functions, verified once from their
  // prototype (btf_prepare_func_args, btf_check_func_arg_match, do_check_subprogs)
  void map_btf_funcs();
  bool is_global(std::uint16_t subprog) const;
  int prepare_func_args(std::uint16_t subprog);
  int check_global_args(std::uint16_t subprog);
  int check_global_mem_arg(int regno, std::uint32_t mem_size);
  int call_global(std::uint32_t idx, std::uint16_t subprog, std::uint32_t& next);
  int verify_global_funcs();
  int check_global_exit();

  std::span<const Insn> insns_;
  const VerifyOptions& options_;
  bool btf_func_info_;  // the program has BTF function info (ProgramImage::btf_func_info)
  WalkMaps walk_maps_;
  std::span<const BtfFunc> btf_funcs_;         // ProgramImage::btf_funcs
  std::vector<const BtfFunc*> btf_func_of_;    // per subprogram, nullptr: none
  std::vector<std::uint8_t> global_called_;    // per subprogram: a path called it
  std::vector<std::uint8_t> global_verified_;  // per subprogram: verified on its own
  VerifyResult& result_;
  VerifierLog log_;
  ProgramShape shape_;

  VerifierState cur_;
  Checkpoint* cur_parent_ = nullptr;
  std::vector<PendingPath> pending_;
  std::vector<std::vector<std::unique_ptr<Checkpoint>>> checkpoints_;
  std::vector<PtrUse> ptr_use_;
  std::vector<std::uint32_t> subprog_depth_;
  std::uint64_t processed_ = 0;
  std::uint64_t jmps_processed_ = 0;
  std::uint64_t prev_jmps_ = 0;
  std::uint64_t prev_insns_ = 0;
  std::uint32_t id_gen_ = 0;
  std::uint32_t total_states_ = 0;
  std::uint32_t live_states_ = 0;
  std::uint32_t peak_states_ = 0;
  std::vector<std::unique_ptr<Checkpoint>> evicted_;
  std::vector<HistoryEntry> history_;
  std::int32_t history_tail_ = -1;
  std::int16_t last_stack_spi_ = -1;  // the fixed-offset stack slot the current insn accessed
  std::uint8_t last_stack_frame_ = 0;
  bool last_global_call_ = false;  // the current insn called a global function
};

}  // namespace userperf::bpf
