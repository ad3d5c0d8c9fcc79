// Global functions (BTF_FUNC_GLOBAL linkage: non-static C functions), as the kernel verifies
// them: not entered at their calls, but once each on their own, from their BTF prototype
// (btf_prepare_func_args). A call only checks its arguments against the prototype
// (btf_check_func_arg_match) and the caller goes on with r0 an unknown scalar and r1-r5 clobbered;
// after the main program, every global function a path called is walked from its first
// instruction in frame 0 with its arguments made from the prototype (do_check_subprogs), until
// none is left. A global function must return a scalar.
#include <cerrno>

#include "bpf/verifier/checker.hpp"

namespace userperf::bpf {
namespace {

constexpr int kMaxFuncRegArgs = 5;  // MAX_BPF_FUNC_REG_ARGS

}  // namespace

void Checker::map_btf_funcs() {
  btf_func_of_.assign(shape_.subprogs.size(), nullptr);
  global_called_.assign(shape_.subprogs.size(), 0);
  global_verified_.assign(shape_.subprogs.size(), 0);
  if (!btf_func_info_) return;  // without BTF the kernel knows no linkage: all are static
  for (const BtfFunc& fn : btf_funcs_) {
    if (fn.start >= insns_.size()) continue;
    const std::uint16_t subprog = shape_.subprog_of[fn.start];
    if (shape_.subprogs[subprog].start == fn.start) btf_func_of_[subprog] = &fn;
  }
}

bool Checker::is_global(std::uint16_t subprog) const {
  return subprog != 0 && subprog < btf_func_of_.size() && btf_func_of_[subprog] != nullptr &&
         btf_func_of_[subprog]->global;
}

// btf_prepare_func_args: what the prototype allows (the argument kinds themselves were read from
// BTF by the loader).
int Checker::prepare_func_args(std::uint16_t subprog) {
  const BtfFunc& fn = *btf_func_of_[subprog];
  const char* name = fn.name.c_str();
  if (fn.args.size() > static_cast<std::size_t>(kMaxFuncRegArgs)) {
    return log_.reject(EINVAL, "Global function %s() with %zu > %d args. Buggy compiler.", name,
                       fn.args.size(), kMaxFuncRegArgs);
  }
  if (!fn.returns_scalar) {
    return log_.reject(
        EINVAL, "Global function %s() doesn't return scalar. Only those are supported.", name);
  }
  for (std::size_t i = 0; i < fn.args.size(); ++i) {
    const BtfFuncArg& arg = fn.args[i];
    if (arg.kind == BtfFuncArg::Kind::kUnsized) {
      return log_.reject(EINVAL, "arg#%zu reference type('%s %s') size cannot be determined: %d", i,
                         arg.btf_kind.c_str(), arg.type_name.c_str(), arg.size_error);
    }
    if (arg.kind == BtfFuncArg::Kind::kUnsupported) {
      return log_.reject(EINVAL, "Arg#%zu type %s in %s() is not supported yet.", i,
                         arg.btf_kind.c_str(), name);
    }
  }
  return 0;
}

// check_mem_reg: NULL, or memory the callee may read and write for the pointee's size (a pointer
// that may be NULL is checked as if it were not). The stack it points to becomes unknown data.
int Checker::check_global_mem_arg(int regno, std::uint32_t mem_size) {
  RegState& r = reg(regno);
  if (r.is_null()) return 0;
  const RegState saved = r;
  r.maybe_null = false;
  CallMeta meta;
  int err = check_helper_mem(regno, mem_size, false, true, meta, " read from");
  if (!err) err = check_helper_mem(regno, mem_size, true, true, meta, " write to");
  if (!err) mark_stack_written(meta);
  reg(regno) = saved;
  return err ? EINVAL : 0;
}

// btf_check_func_arg_match for a global callee: each argument register against the prototype.
int Checker::check_global_args(std::uint16_t subprog) {
  if (int err = prepare_func_args(subprog)) return err;
  const BtfFunc& fn = *btf_func_of_[subprog];
  for (std::size_t i = 0; i < fn.args.size(); ++i) {
    const int regno = static_cast<int>(i) + 1;
    const BtfFuncArg& arg = fn.args[i];
    const RegState& r = reg(regno);
    // check_func_arg_reg_off: of the pointers an argument may be, only the ctx must be unmoved.
    if (arg.kind != BtfFuncArg::Kind::kScalar && r.type == RegType::kPtrToCtx) {
      if (int err = check_ctx_ptr_unmodified(regno)) return err;
    }
    switch (arg.kind) {
      case BtfFuncArg::Kind::kScalar:
        if (!r.is_scalar()) return log_.reject(EINVAL, "R%d is not a scalar", regno);
        break;
      case BtfFuncArg::Kind::kCtx:
        if (r.type != RegType::kPtrToCtx) {
          return log_.reject(EINVAL, "arg#%zu expects pointer to ctx", i);
        }
        break;
      case BtfFuncArg::Kind::kMem:
        if (int err = check_global_mem_arg(regno, arg.mem_size)) return err;
        break;
      case BtfFuncArg::Kind::kUnsized:
      case BtfFuncArg::Kind::kUnsupported:
        break;  // refused by prepare_func_args
    }
  }
  return 0;
}

// check_func_call for a global callee: the arguments are checked, the callee is marked for its
// own verification, and the caller goes on after the call.
int Checker::call_global(std::uint32_t idx, std::uint16_t subprog, std::uint32_t& next) {
  const char* name = btf_func_of_[subprog]->name.c_str();
  if (int err = check_global_args(subprog)) {
    log_.add_to_reason("Caller passes invalid args into func#%u ('%s')", subprog, name);
    return err;
  }
  log_.note("Func#%u ('%s') is global and assumed valid.", subprog, name);
  global_called_[subprog] = 1;
  for (int r = 1; r <= 5; ++r) reg(r) = RegState{};
  reg(0) = make_unknown_scalar();
  last_global_call_ = true;
  next = idx + 1;
  return 0;
}

// do_check_subprogs: each global function some path called, once, in frame 0 with the arguments
// its prototype gives (the ctx, unknown scalars, memory of the pointee's size that may be NULL);
// a global function called only by another is verified in a later round.
int Checker::verify_global_funcs() {
  for (bool again = true; again;) {
    again = false;
    for (std::uint16_t s = 1; s < shape_.subprogs.size(); ++s) {
      if (!global_called_[s] || global_verified_[s]) continue;
      const BtfFunc& fn = *btf_func_of_[s];
      log_.note("Validating %s() func#%u...", fn.name.c_str(), s);
      if (int err = prepare_func_args(s)) return err;
      FuncState entry;
      entry.subprog = s;
      for (std::size_t i = 0; i < fn.args.size(); ++i) {
        RegState& r = entry.regs[i + 1];
        switch (fn.args[i].kind) {
          case BtfFuncArg::Kind::kCtx:
            r = make_pointer(RegType::kPtrToCtx);
            break;
          case BtfFuncArg::Kind::kMem:
            r = make_pointer(RegType::kPtrToMem);
            r.maybe_null = true;
            r.mem_size = fn.args[i].mem_size;
            r.id = ++id_gen_;
            break;
          default:
            r = make_unknown_scalar();
            break;
        }
      }
      entry.regs[kFramePointer] = make_pointer(RegType::kPtrToStack);
      cur_ = VerifierState{};
      cur_.frames.push_back(std::move(entry));
      const std::uint32_t start = shape_.subprogs[s].start;
      log_.walk_start(cur_, start);
      if (int err = walk(start)) return err;
      log_.note("Func#%u ('%s') is safe for any args that match its prototype", s, fn.name.c_str());
      global_verified_[s] = 1;
      again = true;
    }
  }
  return 0;
}

// check_return_code for a subprogram verified on its own: r0 must be a scalar.
int Checker::check_global_exit() {
  const RegState& r0 = reg(0);
  if (r0.type == RegType::kNotInit) return log_.reject(EACCES, "R0 !read_ok");
  if (!r0.is_scalar()) {
    return log_.reject(EINVAL, "At subprogram exit the register R0 is not a scalar value (%s)",
                       reg_type_name(r0));
  }
  return 0;
}

}  // namespace userperf::bpf
