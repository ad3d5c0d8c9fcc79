// The path walk (the kernel's do_check): one abstract state per path, each instruction checked
// by its class's code, a fork pushed at each undecided conditional jump, the pending paths walked
// depth first once the current one ends (at the main program's exit or pruned).
#include "bpf/verifier/checker.hpp"

#include <cerrno>
#include <cinttypes>
#include <utility>

namespace userperf::bpf {
int Checker::walk(std::uint32_t start) {
  std::uint32_t idx = start;
  history_tail_ = -1;
  for (;;) {
    if (++processed_ > options_.insn_limit) {
      log_.stopped_at(idx);
      return log_.reject(E2BIG, "BPF program is too large. Processed %" PRIu64 " insn", processed_);
    }
    bool path_end = false;
    if (shape_.prune_point[idx]) {
      if (int err = is_state_visited(idx, path_end)) {
        log_.stopped_at(idx);
        return err;
      }
    }
    if (!path_end) {
      log_.insn(idx, cur_);
      const Insn& in = insns_[idx];
      std::uint32_t next = idx + 1;
      last_stack_spi_ = -1;
      last_global_call_ = false;
      const std::uint8_t cls = insn_class(in.code);
      int err = 0;
      switch (cls) {
        case BPF_ALU:
        case BPF_ALU64:
          err = do_alu(in);
          break;
        case BPF_LDX:
          err = do_ldx(idx, in);
          break;
        case BPF_STX:
        case BPF_ST:
          err = do_store(idx, in);
          break;
        case BPF_LD:
          if (insn_mode(in.code) == BPF_ABS || insn_mode(in.code) == BPF_IND) {
            err = log_.reject(EINVAL,
                              "BPF_LD_[ABS|IND] instructions not allowed for this program type");
          } else {
            err = do_lddw(in, insns_[idx + 1]);
            next = idx + 2;
          }
          break;
        default: {  // JMP, JMP32
          ++jmps_processed_;
          const std::uint8_t op = insn_op(in.code);
          if (op == BPF_CALL) {
            err = do_call(idx, in, next);
          } else if (op == BPF_EXIT) {
            if (cls == BPF_JMP32 || in.src_reg || in.dst_reg || in.off || in.imm) {
              err = log_.reject(EINVAL, "BPF_EXIT uses reserved fields");
            } else {
              err = do_exit(next, path_end);
            }
          } else if (op == BPF_JA) {
            if (in.src_reg || in.dst_reg || (cls == BPF_JMP ? in.imm != 0 : in.off != 0)) {
              err = log_.reject(EINVAL, "BPF_JA uses reserved fields");
            } else {
              next = static_cast<std::uint32_t>(static_cast<std::int64_t>(idx) + 1 +
                                                (cls == BPF_JMP ? in.off : in.imm));
            }
          } else {
            err = do_cond_jmp(idx, in, next);
          }
          break;
        }
      }
      if (err) return err;
      HistoryEntry entry;
      entry.insn_idx = idx;
      entry.prev = history_tail_;
      entry.stack_spi = last_stack_spi_;
      entry.stack_frame = last_stack_frame_;
      entry.global_call = last_global_call_;
      history_.push_back(entry);
      history_tail_ = static_cast<std::int32_t>(history_.size() - 1);
      if (!path_end) {
        idx = next;
        continue;
      }
    }
    // The path ended (exit of the main program, or pruned): continue with a pending one.
    end_path();
    if (pending_.empty()) return 0;
    PendingPath p = std::move(pending_.back());
    pending_.pop_back();
    cur_ = std::move(p.state);
    cur_parent_ = p.parent;
    history_tail_ = p.history;
    idx = p.insn_idx;
    log_.path_start(p.from_idx, p.insn_idx, cur_);
  }
}

void Checker::end_path() {
  for (Checkpoint* node = cur_parent_; node; node = node->parent) {
    if (--node->branches > 0) break;
  }
  cur_parent_ = nullptr;
}

int Checker::push_branch(std::uint32_t target, std::uint32_t from) {
  if (pending_.size() >= kJmpSeqLimit) {
    return log_.reject(E2BIG, "The sequence of %zu jumps is too complex.", pending_.size() + 1);
  }
  if (cur_parent_) ++cur_parent_->branches;
  pending_.push_back(PendingPath{cur_, cur_parent_, target, from, history_tail_});
  return 0;
}

int Checker::check_read(int r) {
  if (r >= kNumRegs) return log_.reject(EINVAL, "R%d is invalid", r);
  if (reg(r).type == RegType::kNotInit) return log_.reject(EACCES, "R%d !read_ok", r);
  return 0;
}

int Checker::check_write(int r) {
  if (r >= kNumRegs) return log_.reject(EINVAL, "R%d is invalid", r);
  if (r == kFramePointer) return log_.reject(EACCES, "frame pointer is read only");
  return 0;
}

}  // namespace userperf::bpf
