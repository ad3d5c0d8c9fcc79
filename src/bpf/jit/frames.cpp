#include "bpf/jit/frames.hpp"

#include <algorithm>
#include <cerrno>
#include <string>

namespace userperf::bpf::x86jit {

Expected<Frames> lay_out_frames(const vm::Program& program, std::span<const FunctionStack> stacks) {
  const std::size_t n = program.ops.size();
  Frames frames;
  const bool tail_calls = std::any_of(program.ops.begin(), program.ops.end(), [](const vm::Op& o) {
    return o.kind == vm::OpKind::TAIL_CALL;
  });
  if (stacks.empty() || tail_calls) {
    frames.of_op.assign(n, kMaxStack);
    frames.reserve = kMaxCallFrames * kMaxStack;
    return frames;
  }
  auto bad = [](const std::string& why) {
    return make_error(EINVAL, "verified stack depths: " + why);
  };
  if (stacks[0].start != 0) return bad("the first function does not start at insn 0");
  for (std::size_t f = 0; f < stacks.size(); ++f) {
    if (stacks[f].start >= n || (f > 0 && stacks[f].start <= stacks[f - 1].start)) {
      return bad("function starts out of order or past the end");
    }
    if (stacks[f].depth > static_cast<std::uint32_t>(kMaxStack)) return bad("depth past 512");
  }
  // The function of each op, and of each call target (which must start one).
  std::vector<std::uint32_t> function_of(n);
  for (std::size_t i = 0, f = 0; i < n; ++i) {
    if (f + 1 < stacks.size() && stacks[f + 1].start == i) ++f;
    function_of[i] = static_cast<std::uint32_t>(f);
  }
  auto starts_function = [&](std::uint64_t at) {
    return at < n && stacks[function_of[at]].start == at;
  };
  for (std::uint32_t callback : program.callbacks) {
    if (!starts_function(callback)) {
      return bad("callback at insn " + std::to_string(callback) + " starts no function");
    }
  }
  std::vector<std::vector<std::uint32_t>> callees(stacks.size());
  for (std::size_t i = 0; i < n; ++i) {
    const vm::Op& o = program.ops[i];
    auto& from = callees[function_of[i]];
    if (o.kind == vm::OpKind::CALL_LOCAL) {
      const auto target = static_cast<std::uint64_t>(o.off);
      if (!starts_function(target)) {
        return bad("insn " + std::to_string(i) + " calls insn " + std::to_string(target) +
                   ", which starts no function");
      }
      from.push_back(function_of[target]);
    } else if (o.kind == vm::OpKind::LOOP) {
      for (std::uint32_t callback : program.callbacks) from.push_back(function_of[callback]);
    }
  }
  std::vector<std::uint32_t> size(stacks.size());
  for (std::size_t f = 0; f < stacks.size(); ++f) size[f] = (stacks[f].depth + 7) / 8 * 8;
  // chain[f]: the most bytes a chain of `frames_left` frames starting with f can use; built up
  // from one frame, so a call graph with cycles (the verifier rejects recursion, but the bound
  // must hold anyway) is bounded by the depth test's kMaxCallFrames.
  std::vector<std::uint32_t> chain = size;
  for (int frames_left = 2; frames_left <= kMaxCallFrames; ++frames_left) {
    std::vector<std::uint32_t> longer(stacks.size());
    for (std::size_t f = 0; f < stacks.size(); ++f) {
      std::uint32_t deepest_callee = 0;
      for (std::uint32_t g : callees[f]) deepest_callee = std::max(deepest_callee, chain[g]);
      longer[f] = size[f] + deepest_callee;
    }
    chain = std::move(longer);
  }
  frames.reserve = (chain[0] + 15) / 16 * 16;
  frames.of_op.resize(n);
  for (std::size_t i = 0; i < n; ++i) frames.of_op[i] = size[function_of[i]];
  return frames;
}

}  // namespace userperf::bpf::x86jit
