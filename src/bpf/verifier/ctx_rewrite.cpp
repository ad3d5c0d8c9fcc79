#include "bpf/verifier/ctx_rewrite.hpp"

#include "bpf/verifier/insn_patcher.hpp"

namespace userperf::bpf {

std::vector<Insn> convert_ctx_load(const Insn& load, const PerfEventCtxLayout& layout) {
  const std::uint8_t dst = load.dst_reg;
  const std::uint8_t src = load.src_reg;
  const int off = load.off;
  const auto ldx_dw = static_cast<std::uint8_t>(BPF_LDX | BPF_MEM | BPF_DW);
  if (off >= kPerfCtxPeriodOff) {
    // sample_period or addr: the sample pointer, then the field's low bytes (little-endian).
    const bool is_period = off < kPerfCtxAddrOff;
    const int field_base = is_period ? kPerfCtxPeriodOff : kPerfCtxAddrOff;
    const int field = (is_period ? layout.period : layout.addr) + (off - field_base);
    const auto narrow =
        static_cast<std::uint8_t>(BPF_LDX | insn_mode(load.code) | insn_size(load.code));
    return {make_insn(ldx_dw, dst, src, layout.sample_ptr, 0),
            make_insn(narrow, dst, dst, static_cast<std::int16_t>(field), 0)};
  }
  const std::int16_t slot = layout.regs[off / 8];
  if (slot < 0) return {make_insn(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, 0)};
  return {make_insn(ldx_dw, dst, src, layout.regs_ptr, 0), make_insn(ldx_dw, dst, dst, slot, 0)};
}

Expected<std::vector<Insn>> rewrite_ctx_loads(std::span<const Insn> insns,
                                              const std::vector<std::size_t>& ctx_loads,
                                              const PerfEventCtxLayout& layout,
                                              std::vector<FunctionStack>& stacks) {
  InsnPatcher patcher(insns);
  for (std::size_t index : ctx_loads)
    patcher.replace(index, convert_ctx_load(insns[index], layout));
  for (FunctionStack& f : stacks) f.start = static_cast<std::uint32_t>(patcher.new_index(f.start));
  return patcher.apply();
}

}  // namespace userperf::bpf
