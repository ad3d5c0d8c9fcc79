// verify(): the kernel's bpf_check for one perf_event program: the pre-walk checks
// (program_shape.cpp), the walk (walk.cpp), the stack depth of the call chains, then the ctx
// loads the walk found rewritten (ctx_rewrite.cpp).
#include "bpf/verifier/verifier.hpp"

#include <cerrno>
#include <utility>

#include "bpf/verifier/checker.hpp"
#include "bpf/verifier/ctx_rewrite.hpp"

namespace userperf::bpf {

int Checker::run_checks() {
  if (options_.prog_type != BPF_PROG_TYPE_PERF_EVENT) {
    return log_.reject(EINVAL, "prog_type %u is not verified here (only BPF_PROG_TYPE_PERF_EVENT)",
                       options_.prog_type);
  }
  std::vector<MapSpec> object_maps;
  if (options_.maps) {
    object_maps.assign(
        options_.maps->begin(),
        options_.maps->begin() + static_cast<std::ptrdiff_t>(walk_maps_.object_maps));
  }
  if (int err = check_program_shape(insns_, options_.maps ? &object_maps : nullptr, shape_, log_)) {
    return err;
  }
  // check_subprogs... the kernel's loader: a tail call in a subprogram needs BTF function info
  // (the JIT unwinds the subprogram's frame, whose prototype it takes from BTF).
  if (!btf_func_info_) {
    for (std::size_t i = 0; i < insns_.size(); ++i) {
      const Insn& in = insns_[i];
      if (shape_.subprog_of[i] != 0 && in.code == (BPF_JMP | BPF_CALL) && in.src_reg == 0 &&
          in.imm == BPF_FUNC_tail_call) {
        return log_.reject(EINVAL, "tail_call is not allowed in subprogs without BTF");
      }
    }
  }
  map_btf_funcs();
  checkpoints_.resize(insns_.size());
  ptr_use_.assign(insns_.size(), PtrUse::kUnseen);
  subprog_depth_.assign(shape_.subprogs.size(), 0);

  FuncState main;
  main.regs[1] = make_pointer(RegType::kPtrToCtx);
  main.regs[kFramePointer] = make_pointer(RegType::kPtrToStack);
  cur_.frames.push_back(std::move(main));
  log_.walk_start(cur_, 0);

  if (int err = walk(0)) return err;
  if (int err = verify_global_funcs()) return err;
  if (int err = check_max_stack_depth()) return err;
  for (std::size_t s = 0; s < shape_.subprogs.size(); ++s)
    result_.function_stacks.push_back({shape_.subprogs[s].start, subprog_depth_[s]});

  std::vector<std::size_t> ctx_loads;
  for (std::size_t i = 0; i < insns_.size(); ++i) {
    if (ptr_use_[i] == PtrUse::kCtx && insn_class(insns_[i].code) == BPF_LDX)
      ctx_loads.push_back(i);
  }
  // Loads through BTF pointers become probe loads (the kernel's BPF_PROBE_MEM).
  std::vector<Insn> marked(insns_.begin(), insns_.end());
  for (std::size_t i = 0; i < marked.size(); ++i) {
    if (ptr_use_[i] != PtrUse::kBtf || insn_class(marked[i].code) != BPF_LDX) continue;
    const std::uint8_t mode =
        insn_mode(marked[i].code) == kModeMemsx ? kModeProbeMemsx : kModeProbeMem;
    marked[i].code = static_cast<std::uint8_t>(BPF_LDX | mode | insn_size(marked[i].code));
  }
  if (options_.ctx_layout) {
    auto rewritten =
        rewrite_ctx_loads(marked, ctx_loads, *options_.ctx_layout, result_.function_stacks);
    if (!rewritten) return log_.reject_verbatim(rewritten.error().code, rewritten.error().message);
    result_.insns = std::move(rewritten.value());
  } else {
    result_.insns = std::move(marked);
  }
  return 0;
}

VerifyResult verify(const ProgramImage& program, const VerifyOptions& options) {
  VerifyResult result;
  std::vector<MapSpec> maps;
  WalkMaps walk_maps;
  if (options.maps) {
    maps = *options.maps;
    walk_maps.object_maps = maps.size();
    for (std::size_t i = 0; i < walk_maps.object_maps; ++i) {
      const MapSpec* inner = inner_map_template((*options.maps)[i]);
      walk_maps.inner_of.push_back(inner ? static_cast<std::int16_t>(maps.size()) : -1);
      if (inner) maps.push_back(*inner);
    }
  }
  VerifyOptions walk_options = options;
  if (options.maps) walk_options.maps = &maps;
  Checker checker(program.insns, walk_options, result, program.btf_func_info, std::move(walk_maps),
                  program.btf_funcs);
  const int err = checker.run();
  result.accepted = err == 0;
  result.error = err;
  if (err) {
    result.insns.clear();
    result.function_stacks.clear();
  }
  return result;
}

}  // namespace userperf::bpf
