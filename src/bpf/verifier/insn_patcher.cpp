#include "bpf/verifier/insn_patcher.hpp"

#include <cerrno>
#include <limits>

namespace userperf::bpf {

void InsnPatcher::replace(std::size_t index, std::vector<Insn> replacement) {
  patches_[index] = std::move(replacement);
}

std::size_t InsnPatcher::new_index(std::size_t index) const {
  std::size_t grown = 0;
  for (auto it = patches_.begin(); it != patches_.end() && it->first < index; ++it)
    grown += it->second.size() - 1;
  return index + grown;
}

Expected<std::vector<Insn>> InsnPatcher::apply() const {
  // new_index[i]: where old instruction i starts; new_index[n]: the new length.
  std::vector<std::int64_t> new_index(insns_.size() + 1);
  std::int64_t next = 0;
  for (std::size_t i = 0; i < insns_.size(); ++i) {
    new_index[i] = next;
    const auto it = patches_.find(i);
    next += it == patches_.end() ? 1 : static_cast<std::int64_t>(it->second.size());
  }
  new_index[insns_.size()] = next;

  std::vector<Insn> out;
  out.reserve(static_cast<std::size_t>(next));
  for (std::size_t i = 0; i < insns_.size(); ++i) {
    const auto it = patches_.find(i);
    if (it != patches_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      continue;
    }
    Insn in = insns_[i];
    const std::uint8_t cls = insn_class(in.code);
    const bool jump_class = cls == BPF_JMP || cls == BPF_JMP32;
    const std::uint8_t op = insn_op(in.code);
    const bool is_jump = jump_class && op != BPF_EXIT && op != BPF_CALL;
    const bool is_local_call = in.code == (BPF_JMP | BPF_CALL) && in.src_reg == BPF_PSEUDO_CALL;
    const bool uses_imm = in.code == (BPF_JMP32 | BPF_JA) || is_local_call;
    if (is_jump || is_local_call) {
      const std::int64_t rel = uses_imm ? in.imm : in.off;
      const std::int64_t target = static_cast<std::int64_t>(i) + rel + 1;
      if (target < 0 || target > static_cast<std::int64_t>(insns_.size())) {
        return make_error(EINVAL, "jump out of range at insn " + std::to_string(i));
      }
      const std::int64_t new_rel = new_index[static_cast<std::size_t>(target)] - new_index[i] - 1;
      if (uses_imm) {
        in.imm = static_cast<std::int32_t>(new_rel);
      } else {
        if (new_rel < std::numeric_limits<std::int16_t>::min() ||
            new_rel > std::numeric_limits<std::int16_t>::max()) {
          return make_error(ERANGE,
                            "insn " + std::to_string(i) + " cannot be patched due to 16-bit range");
        }
        in.off = static_cast<std::int16_t>(new_rel);
      }
    }
    out.push_back(in);
  }
  return out;
}

}  // namespace userperf::bpf
