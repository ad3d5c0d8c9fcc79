// Calls and returns (check_helper_call, check_func_call, prepare_func_exit): a helper call (its
// arguments are helper_args.cpp's), its return value; subprogram frames; callbacks (bpf_loop:
// push_callback_call and the callback's exit back to the call); and, after the walk, the stack
// depth of every static call chain.
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <limits>
#include <string>
#include <utility>

#include "bpf/verifier/checker.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {
namespace {

constexpr int kHelperIdLimit = 212;             // __BPF_FUNC_MAX_ID of Linux 6.18
constexpr std::uint32_t kStackRound = 16;       // round_up_stack_depth() with the JIT
constexpr std::uint32_t kPrivateStackMin = 64;  // BPF_PRIV_STACK_MIN_SIZE
constexpr std::int64_t kMaxErrno = 4095;
// A subprogram that tail-calls may be entered only while the frames below it use less than this
// (the x86-64 JIT keeps the tail call count and unwinds frames: MAX_BPF_STACK / 2).
constexpr std::uint32_t kTailCallCallerStackLimit = 256;

}  // namespace

int Checker::do_call(std::uint32_t idx, const Insn& in, std::uint32_t& next) {
  if (insn_source(in.code) != BPF_K || in.off != 0 ||
      (in.src_reg != 0 && in.src_reg != BPF_PSEUDO_CALL) || in.dst_reg != 0 ||
      insn_class(in.code) == BPF_JMP32) {
    return log_.reject(EINVAL, "BPF_CALL uses reserved fields");
  }
  if (in.src_reg == BPF_PSEUDO_CALL) return do_local_call(idx, in, next);
  const std::int32_t id = in.imm;
  if (id < 0 || id >= kHelperIdLimit)
    return log_.reject(EINVAL, "invalid func %s#%d", helper_label(id), id);
  if (id == BPF_FUNC_get_func_ip) return check_get_func_ip(id);
  const HelperProto* proto = perf_event_helper_proto(id);
  if (proto && (id == BPF_FUNC_get_current_task_btf || id == BPF_FUNC_find_vma) &&
      (options_.kernel_btf == nullptr || !options_.kernel_btf->present())) {
    return log_.reject(EINVAL,
                       "helper %s#%d types its pointers with the kernel's BTF, which the program's "
                       "image does not carry (read from /sys/kernel/btf/vmlinux at load)",
                       helper_label(id), id);
  }
  if (!proto) {
    return log_.reject(EINVAL, "program of this type cannot use helper %s#%d", helper_label(id),
                       id);
  }
  if (proto->gpl_only && !options_.gpl_compatible) {
    return log_.reject(EINVAL,
                       "cannot call GPL-restricted function from non-GPL compatible program");
  }
  CallMeta meta;
  ArgType prev = ArgType::kNone;
  for (int a = 0; a < 5 && proto->args[a] != ArgType::kNone; ++a) {
    if (int err = check_helper_arg(a + 1, proto->args[a], meta, prev)) return err;
    prev = proto->args[a];
  }
  if (int err = check_map_compat(meta.map, id)) return err;
  if (id == BPF_FUNC_tail_call && !cur_.refs.empty()) {
    return log_.reject(EINVAL, "tail_call would lead to reference leak");
  }
  // The record is given back: every copy of the pointer becomes a plain value.
  if (meta.release_ref) release_reference(meta.release_ref);
  if (id == BPF_FUNC_loop) {
    // The walk ends a callback's iterations when nr_loops runs out: its value decides.
    need_precise_reg(1);
    if (frame().callback_depth < reg(1).umax) {
      if (int err = push_callback(idx, meta.callback, id)) return err;
    } else {
      frame().callback_depth = 0;
    }
  }
  // As the kernel, the callback may run on every visit of the call (the walk converges at the
  // call's checkpoint).
  if (id == BPF_FUNC_find_vma) {
    if (int err = push_callback(idx, meta.callback, id)) return err;
  }
  mark_stack_written(meta);
  for (int r = 1; r <= 5; ++r) reg(r) = RegState{};
  RegState& r0 = reg(0);
  switch (proto->ret) {
    case RetType::kVoid:
      r0 = RegState{};
      break;
    case RetType::kInteger:
      r0 = make_unknown_scalar();
      if (id == BPF_FUNC_get_stack || id == BPF_FUNC_probe_read_str ||
          id == BPF_FUNC_probe_read_kernel_str || id == BPF_FUNC_probe_read_user_str) {
        r0.smax = static_cast<std::int64_t>(meta.msize_max);
        r0.s32_max = static_cast<std::int32_t>(meta.msize_max);
        r0.smin = -kMaxErrno;
        r0.s32_min = -kMaxErrno;
        reg_bounds_sync(r0);
      }
      break;
    case RetType::kPtrToBtfIdTask:
      r0 = current_task_btf();
      break;
    case RetType::kPtrToRingbufMemOrNull: {
      r0 = make_pointer(RegType::kPtrToRingbufMem);
      r0.maybe_null = true;
      r0.mem_size = static_cast<std::uint32_t>(meta.alloc_size);
      r0.id = ++id_gen_;  // the NULL-check id, replaced by the reference's as the kernel does
      r0.id = r0.ref_obj_id = acquire_reference(idx);
      break;
    }
    case RetType::kPtrToMapValueOrNull: {
      r0 = make_pointer(RegType::kPtrToMapValue);
      r0.map = static_cast<std::int16_t>(meta.map);
      const MapSpec& map = (*options_.maps)[static_cast<std::size_t>(meta.map)];
      // An inner array under a BPF_F_INNER_MAP template may have fewer entries than the
      // template says: its lookups keep their NULL check (a NULL the program did not check
      // would be dereferenced in a signal handler).
      const bool sized_by_template = static_cast<std::size_t>(meta.map) >= walk_maps_.object_maps &&
                                     (map.map_flags & BPF_F_INNER_MAP);
      const bool elide = id == BPF_FUNC_map_lookup_elem && meta.const_map_key >= 0 &&
                         meta.const_map_key < static_cast<std::int64_t>(map.max_entries) &&
                         !sized_by_template;
      if (!elide) {
        r0.maybe_null = true;
        r0.id = ++id_gen_;
      }
      break;
    }
  }
  next = idx + 1;
  return 0;
}

int Checker::do_local_call(std::uint32_t idx, const Insn& in, std::uint32_t& next) {
  const auto target = static_cast<std::uint32_t>(static_cast<std::int64_t>(idx) + in.imm + 1);
  // A global function is not entered: it is verified on its own (global_funcs.cpp).
  if (is_global(shape_.subprog_of[target]))
    return call_global(idx, shape_.subprog_of[target], next);
  if (cur_.frames.size() >= static_cast<std::size_t>(kMaxCallFrames)) {
    return log_.reject(E2BIG, "the call stack of %zu frames is too deep", cur_.frames.size() + 1);
  }
  FuncState callee;
  callee.callsite = static_cast<std::int32_t>(idx);
  callee.subprog = shape_.subprog_of[target];
  callee.frameno = static_cast<std::uint8_t>(cur_.frames.size());
  for (int r = 1; r <= 5; ++r) callee.regs[static_cast<std::size_t>(r)] = reg(r);
  callee.regs[kFramePointer] = make_pointer(RegType::kPtrToStack);
  callee.regs[kFramePointer].frameno = callee.frameno;
  for (int r = 0; r <= 5; ++r) reg(r) = RegState{};
  cur_.frames.push_back(std::move(callee));
  next = target;
  return 0;
}

// push_callback_call: the path that enters the callback is pushed, with a frame set up as the
// helper calls it (bpf_loop: r1 the index, an unknown scalar; r2 the caller's r3; bpf_find_vma:
// r1 the task, r2 a vm_area_struct BTF pointer, r3 the caller's r4) and the caller's
// registers as they are at the call, so that the callback's exit can return to the call and the
// call decide again whether to enter it. The current path goes on as if the helper did not call it.
int Checker::push_callback(std::uint32_t idx, std::int16_t callback, std::int32_t helper) {
  if (cur_.frames.size() >= static_cast<std::size_t>(kMaxCallFrames)) {
    return log_.reject(E2BIG, "the call stack of %zu frames is too deep", cur_.frames.size() + 1);
  }
  const Subprog& sp = shape_.subprogs[static_cast<std::size_t>(callback)];
  VerifierState entered = cur_;
  FuncState callee;
  callee.callsite = static_cast<std::int32_t>(idx);
  callee.subprog = static_cast<std::uint16_t>(callback);
  callee.frameno = static_cast<std::uint8_t>(entered.frames.size());
  callee.in_callback = true;
  if (helper == BPF_FUNC_find_vma) {
    // set_find_vma_callback_state: (task, vma, the caller's r4).
    callee.regs[1] = entered.cur().regs[1];
    callee.regs[2] = make_pointer(RegType::kPtrToBtfId);
    callee.regs[2].btf_type = options_.kernel_btf->vm_area_struct;
    callee.regs[3] = entered.cur().regs[4];
  } else {
    callee.regs[1] = make_unknown_scalar();
    callee.regs[2] = entered.cur().regs[3];
  }
  callee.regs[kFramePointer] = make_pointer(RegType::kPtrToStack);
  callee.regs[kFramePointer].frameno = callee.frameno;
  ++entered.cur().callback_depth;
  ++entered.callback_unroll_depth;
  entered.frames.push_back(std::move(callee));
  frame().callback_depth = 0;
  if (pending_.size() >= kJmpSeqLimit) {
    return log_.reject(E2BIG, "The sequence of %zu jumps is too complex.", pending_.size() + 1);
  }
  // The entered path's history records the call as the callback's entry (precision.cpp).
  HistoryEntry entry;
  entry.insn_idx = idx;
  entry.prev = history_tail_;
  entry.callback_entry = true;
  history_.push_back(entry);
  if (cur_parent_) ++cur_parent_->branches;
  pending_.push_back(PendingPath{std::move(entered), cur_parent_, sp.start, idx,
                                 static_cast<std::int32_t>(history_.size() - 1)});
  return 0;
}

// A callback's exit (prepare_func_exit with in_callback_fn): r0 must be a scalar in the
// callback's return range; the path goes back to the helper call, with the caller's registers
// as they were there, and the scalars that changed since the call's last visit on this path,
// unless their values decided something, widened to unknown (widen_imprecise_scalars), so that
// the iterations converge.
int Checker::exit_callback(std::uint32_t& next) {
  if (reg(0).type != RegType::kScalar) return log_.reject(EACCES, "R0 not a scalar value");
  need_precise_reg(0);
  const RegState r0 = reg(0);
  if (r0.smin < 0 || r0.smax > 1) {
    std::string has;
    if (r0.smin > std::numeric_limits<std::int64_t>::min())
      has += format_text(" smin=%" PRId64, r0.smin);
    if (r0.smax < std::numeric_limits<std::int64_t>::max())
      has += format_text(" smax=%" PRId64, r0.smax);
    if (has.empty()) has = " unknown scalar value";
    return log_.reject(
        EINVAL, "At callback return the register R0 has%s should have been in [0, 1]", has.c_str());
  }
  const auto callsite = static_cast<std::uint32_t>(frame().callsite);
  cur_.frames.pop_back();
  next = callsite;
  for (const auto& cp : checkpoints_[callsite]) {
    if (cp->branches == 0 || cp->state.frames.size() != cur_.frames.size()) continue;
    bool same_callsites = true;
    for (std::size_t f = 0; f < cur_.frames.size(); ++f) {
      same_callsites = same_callsites && cp->state.frames[f].callsite == cur_.frames[f].callsite;
    }
    if (!same_callsites) continue;
    widen_imprecise_scalars(cp->state, cur_);
    break;
  }
  return 0;
}

int Checker::do_exit(std::uint32_t& next, bool& path_end) {
  if (cur_.frames.size() > 1) {
    const RegState r0 = reg(0);
    if (r0.type == RegType::kPtrToStack) {
      return log_.reject(EINVAL, "cannot return stack pointer to the caller frame");
    }
    if (frame().in_callback) return exit_callback(next);
    const auto callsite = static_cast<std::uint32_t>(frame().callsite);
    cur_.frames.pop_back();
    reg(0) = r0;
    next = callsite + 1;
    return 0;
  }
  if (int err = check_reference_leak()) return err;
  if (frame().subprog != 0) {  // a global function verified on its own
    if (int err = check_global_exit()) return err;
    path_end = true;
    return 0;
  }
  // PERF_EVENT programs may return any initialized value (privileged: pointers too).
  if (reg(0).type == RegType::kNotInit) return log_.reject(EACCES, "R0 !read_ok");
  path_end = true;
  return 0;
}

// ---- references

std::uint32_t Checker::acquire_reference(std::uint32_t insn_idx) {
  const std::uint32_t id = ++id_gen_;
  cur_.refs.push_back({id, insn_idx});
  return id;
}

void Checker::release_reference(std::uint32_t ref_obj_id) {
  std::erase_if(cur_.refs, [&](const RefState& r) { return r.id == ref_obj_id; });
  // Privileged (allow_ptr_leaks): the copies become unknown scalars, as mark_reg_invalid.
  auto invalidate = [&](RegState& r) {
    if (r.ref_obj_id == ref_obj_id) r = make_unknown_scalar();
  };
  for (FuncState& f : cur_.frames) {
    for (RegState& r : f.regs) invalidate(r);
    for (StackSlot& s : f.stack) {
      if (s.type[7] == StackByte::kSpill) invalidate(s.spilled);
    }
  }
}

int Checker::check_reference_leak() {
  if (cur_.refs.empty()) return 0;
  const RefState& ref = cur_.refs.front();
  return log_.reject(EINVAL, "Unreleased reference id=%u alloc_insn=%u", ref.id, ref.insn_idx);
}

// ---- stack depth

int Checker::check_max_stack_depth() {
  // Every call chain of the static call graph. The x86-64 JIT gives perf_event programs private
  // stacks (Linux 6.13+): a frame of 64 bytes or more lives in its own and counts only against
  // its own limit; the smaller ones share the program stack and must fit MAX_BPF_STACK together.
  // stack_depth reports the whole chain, private frames included.
  std::vector<std::vector<std::uint16_t>> callees(shape_.subprogs.size());
  std::vector<bool> has_tail_call(shape_.subprogs.size(), false);
  for (std::size_t i = 0; i < insns_.size(); ++i) {
    const Insn& in = insns_[i];
    // A callback counts as a call where its address is taken (the helper calls it from there).
    if ((in.code == (BPF_JMP | BPF_CALL) && in.src_reg == BPF_PSEUDO_CALL) ||
        (is_lddw(in) && in.src_reg == BPF_PSEUDO_FUNC)) {
      const auto target = static_cast<std::size_t>(static_cast<std::int64_t>(i) + in.imm + 1);
      callees[shape_.subprog_of[i]].push_back(shape_.subprog_of[target]);
    } else if (in.code == (BPF_JMP | BPF_CALL) && in.src_reg == 0 && in.imm == BPF_FUNC_tail_call) {
      has_tail_call[shape_.subprog_of[i]] = true;
    }
  }
  auto rounded = [&](std::size_t s) {
    return (subprog_depth_[s] + kStackRound - 1) / kStackRound * kStackRound;
  };
  std::uint32_t deepest = 0;
  struct Frame {
    std::uint16_t subprog;
    std::size_t next_callee;
    std::uint32_t depth;   // every frame of the chain
    std::uint32_t shared;  // the frames on the program stack
  };
  auto shared = [&](std::size_t s) { return rounded(s) >= kPrivateStackMin ? 0 : rounded(s); };
  std::vector<Frame> chain{{0, 0, rounded(0), shared(0)}};
  while (!chain.empty()) {
    Frame& top = chain.back();
    if (top.shared > static_cast<std::uint32_t>(kMaxStack)) {
      return log_.reject(EACCES, "combined stack size of %zu calls is %u. Too large", chain.size(),
                         top.shared);
    }
    deepest = std::max(deepest, top.depth);
    if (top.next_callee >= callees[top.subprog].size()) {
      chain.pop_back();
      continue;
    }
    const std::uint16_t callee = callees[top.subprog][top.next_callee++];
    if (chain.size() >= static_cast<std::size_t>(kMaxCallFrames)) {
      return log_.reject(E2BIG, "the call stack of %zu frames is too deep !", chain.size() + 1);
    }
    // check_max_stack_depth_subprog: tail calls and bpf-to-bpf calls mix only while the frames
    // below the tail-calling subprogram stay under 256 bytes.
    if (has_tail_call[callee] && top.depth >= kTailCallCallerStackLimit) {
      return log_.reject(
          EACCES,
          "tail_calls are not allowed when call stack of previous frames is %u bytes. Too large",
          top.depth);
    }
    const std::uint32_t depth = top.depth + rounded(callee);
    const std::uint32_t on_shared = top.shared + shared(callee);
    chain.push_back({callee, 0, depth, on_shared});
  }
  result_.stack_depth = deepest;
  return 0;
}

}  // namespace userperf::bpf
