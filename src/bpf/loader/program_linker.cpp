#include "bpf/loader/program_linker.hpp"

#include <elf.h>

#include <optional>

#include "bpf/loader/global_data.hpp"
#include "bpf/loader/untrusted_bytes.hpp"

namespace userperf::bpf::loader {
namespace {

constexpr std::uint64_t kInsnSize = sizeof(Insn);

Insn insn_at(const ElfSection& section, std::uint64_t index) {
  return read_at<Insn>(section.bytes, index * kInsnSize);
}

bool is_pseudo_call(const Insn& insn) {
  return insn.code == (BPF_JMP | BPF_CALL) && insn.src_reg == BPF_PSEUDO_CALL;
}

std::string where(const ElfSection& section, std::uint64_t offset) {
  return "section '" + section.name + "' offset " + std::to_string(offset);
}

Error relocation_error(const ElfSection& section, std::uint64_t offset, const std::string& what) {
  return make_error(EINVAL, "relocation at " + where(section, offset) + ": " + what);
}

std::optional<Error> check_relocation(const ElfView& elf, const ElfSection& section,
                                      const ElfRelocation& relocation) {
  const std::uint64_t offset = relocation.offset;
  if (!fits(offset, kInsnSize, section.size)) {
    return relocation_error(section, offset, "outside the section");
  }
  if (offset % kInsnSize != 0) {
    return relocation_error(section, offset, "not on an instruction boundary");
  }
  if (relocation.type != R_BPF_64_64 && relocation.type != R_BPF_64_32) {
    return relocation_error(section, offset,
                            "unsupported relocation type " + std::to_string(relocation.type));
  }
  if (relocation.symbol == 0 || relocation.symbol >= elf.symbols().size()) {
    return relocation_error(section, offset, "bad symbol index");
  }
  const ElfSymbol& symbol = elf.symbols()[relocation.symbol];
  const ElfSection* target = elf.section_of(symbol);
  const std::string symbol_name = symbol.name.empty() ? "<section symbol>" : symbol.name;
  if (target == nullptr) {
    return relocation_error(section, offset, "symbol '" + symbol_name + "' is not defined here");
  }
  if (!target->executable() && target->name != ".maps" && !is_global_data_section(*target)) {
    return relocation_error(section, offset,
                            "symbol '" + symbol_name + "' is in section '" + target->name +
                                "', which is neither maps, global data nor code");
  }
  const Insn insn = insn_at(section, offset / kInsnSize);
  if (relocation.type == R_BPF_64_64 &&
      (!is_lddw(insn) || !fits(offset, 2 * kInsnSize, section.size))) {
    return relocation_error(section, offset, "R_BPF_64_64 on an instruction that is not lddw");
  }
  if (relocation.type == R_BPF_64_32 && !is_pseudo_call(insn)) {
    return relocation_error(section, offset,
                            "R_BPF_64_32 on an instruction that is not a BPF-to-BPF call");
  }
  return std::nullopt;
}

}  // namespace

// One link() call: the output, and where each function already placed starts in it. Functions
// are laid out depth first, in the order of their first reference (libbpf's layout, so the
// kernel's verifier log reads the same for both): a newly placed callee is relocated completely
// before its caller goes on. An explicit stack, not recursion: call depth is input-controlled.
class LinkRun {
 public:
  explicit LinkRun(const ProgramLinker& linker) : linker_(linker) {}

  Expected<LinkedProgram> run(const FunctionRange& entry) {
    place(entry);
    while (!stack_.empty()) {
      if (auto error = resume_top()) return *error;
    }
    LinkedProgram linked{std::move(out_), std::move(functions_)};
    return linked;
  }

 private:
  struct Frame {
    const FunctionRange* function;
    std::uint64_t base;  // where the function starts in out_
    std::uint64_t next;  // the next of its instructions to relocate
  };

  std::uint64_t place(const FunctionRange& function) {
    const auto key = std::make_pair(function.section, function.first);
    if (auto it = placed_.find(key); it != placed_.end()) return it->second;
    const std::uint64_t base = out_.size();
    const ElfSection& section = linker_.elf_->sections()[function.section];
    for (std::uint64_t i = 0; i < function.count; ++i) {
      out_.push_back(insn_at(section, function.first + i));
    }
    placed_.emplace(key, base);
    functions_.push_back({function.name, static_cast<std::uint32_t>(base)});
    stack_.push_back({&function, base, 0});
    return base;
  }

  // Places the function that starts at `target` (an instruction index in `section`) and returns
  // the pc-relative immediate that reaches it from `out_pc` (target = pc + imm + 1).
  Expected<std::int32_t> reach(const ElfSection& section, std::int64_t target, std::uint64_t out_pc,
                               std::uint64_t site) {
    const FunctionRange* callee =
        target < 0
            ? nullptr
            : linker_.function_starting_at(section.index, static_cast<std::uint64_t>(target));
    if (callee == nullptr) {
      return make_error(EINVAL, "call or function address at " + where(section, site) +
                                    " does not reach the start of a function");
    }
    const std::uint64_t out_target = place(*callee);
    return static_cast<std::int32_t>(static_cast<std::int64_t>(out_target) -
                                     static_cast<std::int64_t>(out_pc) - 1);
  }

  // Relocates the top frame's function until it places a new callee (which then runs first) or
  // ends.
  std::optional<Error> resume_top() {
    const std::size_t depth = stack_.size();
    const Frame frame = stack_.back();
    const FunctionRange& function = *frame.function;
    const ElfSection& section = linker_.elf_->sections()[function.section];
    for (std::uint64_t i = frame.next; i < function.count; ++i) {
      const std::uint64_t site = (function.first + i) * kInsnSize;
      const std::uint64_t out_pc = frame.base + i;
      const auto found = linker_.relocations_.find({function.section, site});
      if (found != linker_.relocations_.end()) {
        if (auto error = apply(section, found->second, i + 1 < function.count, out_pc)) {
          return error;
        }
      } else if (is_lddw(out_[out_pc]) && out_[out_pc].src_reg != 0) {
        // Only a relocation makes an lddw name a map, a map value or a function: one that says
        // so by itself would carry an index nothing checked (a bit-flipped object had map 1.7e9).
        return make_error(EINVAL, "lddw at " + where(section, site) + " has src_reg " +
                                      std::to_string(out_[out_pc].src_reg) +
                                      " without a relocation");
      } else if (is_pseudo_call(out_[out_pc])) {
        // A call inside the section, resolved by the assembler: relative to this instruction.
        const std::int64_t target =
            static_cast<std::int64_t>(function.first + i) + out_[out_pc].imm + 1;
        auto imm = reach(section, target, out_pc, site);
        if (!imm) return imm.error();
        out_[out_pc].imm = *imm;
      }
      if (is_lddw(out_[out_pc])) {
        if (i + 1 >= function.count) {
          return make_error(EINVAL, "lddw at " + where(section, site) + " ends its function");
        }
        if (linker_.relocations_.count({function.section, site + kInsnSize}) != 0) {
          return relocation_error(section, site + kInsnSize, "on the second half of an lddw");
        }
        ++i;
      }
      if (stack_.size() > depth) {  // a new callee: relocate it first
        stack_[depth - 1].next = i + 1;
        return std::nullopt;
      }
    }
    stack_.pop_back();
    return std::nullopt;
  }

  std::optional<Error> apply(const ElfSection& section, const ElfRelocation& relocation,
                             bool has_next, std::uint64_t out_pc) {
    const std::uint64_t site = relocation.offset;
    const ElfSymbol& symbol = linker_.elf_->symbols()[relocation.symbol];
    const ElfSection* target = linker_.elf_->section_of(symbol);
    const std::string symbol_name = symbol.name.empty() ? "<section symbol>" : symbol.name;
    if (target == nullptr) {
      return relocation_error(section, site, "symbol '" + symbol_name + "' is not defined here");
    }
    const std::int64_t addend = out_[out_pc].imm;
    if (relocation.type == R_BPF_64_32) {  // a call: imm counts instructions after the symbol
      if (!target->executable() || symbol.value % kInsnSize != 0) {
        return relocation_error(section, site, "call to '" + symbol_name + "' outside the code");
      }
      auto imm = reach(*target, static_cast<std::int64_t>(symbol.value / kInsnSize) + addend + 1,
                       out_pc, site);
      if (!imm) return imm.error();
      out_[out_pc].imm = *imm;  // reach() may have grown out_
      return std::nullopt;
    }
    if (!has_next) return relocation_error(section, site, "lddw ends its function");
    Insn& insn = out_[out_pc];
    Insn& high = out_[out_pc + 1];
    const std::int64_t offset = static_cast<std::int64_t>(symbol.value) + addend;  // in bytes
    const MapLayout& layout = linker_.layout_;
    if (target->index == layout.maps_section && layout.maps_section != 0) {
      const auto map = layout.btf_map_at.find(static_cast<std::uint64_t>(offset));
      if (offset < 0 || map == layout.btf_map_at.end()) {
        return relocation_error(section, site, "'" + symbol_name + "' is not the start of a map");
      }
      insn.src_reg = BPF_PSEUDO_MAP_IDX;
      insn.imm = static_cast<std::int32_t>(map->second);
      high.imm = 0;
      return std::nullopt;
    }
    if (auto data = layout.data_map_of.find(target->index); data != layout.data_map_of.end()) {
      if (offset < 0 || static_cast<std::uint64_t>(offset) >= target->size) {
        return relocation_error(section, site,
                                "'" + symbol_name + "' + " + std::to_string(addend) +
                                    " lies outside section '" + target->name + "'");
      }
      insn.src_reg = BPF_PSEUDO_MAP_IDX_VALUE;
      insn.imm = static_cast<std::int32_t>(data->second);
      high.imm = static_cast<std::int32_t>(offset);
      return std::nullopt;
    }
    if (target->executable()) {  // a function's address (bpf_loop callbacks)
      if (offset < 0 || offset % kInsnSize != 0) {
        return relocation_error(section, site, "function address not on an instruction");
      }
      auto imm = reach(*target, offset / static_cast<std::int64_t>(kInsnSize), out_pc, site);
      if (!imm) return imm.error();
      out_[out_pc].src_reg = BPF_PSEUDO_FUNC;  // reach() may have grown out_
      out_[out_pc].imm = *imm;
      out_[out_pc + 1].imm = 0;
      return std::nullopt;
    }
    return relocation_error(section, site,
                            "symbol '" + symbol_name + "' is in section '" + target->name +
                                "', which is neither maps, global data nor code");
  }

  const ProgramLinker& linker_;
  std::vector<Insn> out_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> placed_;
  std::vector<Frame> stack_;
  std::vector<LinkedProgram::Function> functions_;
};

std::optional<Error> check_code_relocations(const ElfView& elf) {
  for (const ElfSection& section : elf.sections()) {
    if (!section.executable()) continue;
    for (const ElfRelocation& relocation : section.relocations) {
      if (auto error = check_relocation(elf, section, relocation)) return error;
    }
  }
  return std::nullopt;
}

Expected<ProgramLinker> ProgramLinker::create(const ElfView& elf, MapLayout layout) {
  if (auto error = check_code_relocations(elf)) return *error;
  ProgramLinker linker(elf, std::move(layout));
  for (const ElfSymbol& symbol : elf.symbols()) {
    const ElfSection* section = elf.section_of(symbol);
    if (symbol.type != STT_FUNC || section == nullptr || !section->executable()) continue;
    if (symbol.value % kInsnSize != 0 || symbol.size % kInsnSize != 0 || symbol.size == 0 ||
        !fits(symbol.value, symbol.size, section->size)) {
      return make_error(EINVAL, "function '" + symbol.name + "' does not lie on whole " +
                                    "instructions inside " + where(*section, symbol.value));
    }
    const FunctionRange function{symbol.name, section->index, symbol.value / kInsnSize,
                                 symbol.size / kInsnSize};
    // Aliases (two symbols at one address) are one function: the first name wins.
    if (linker.function_at_
            .emplace(std::make_pair(function.section, function.first), linker.functions_.size())
            .second) {
      linker.functions_.push_back(function);
    }
  }
  for (const ElfSection& section : elf.sections()) {
    if (!section.executable()) continue;
    for (const ElfRelocation& relocation : section.relocations) {
      linker.relocations_[{section.index, relocation.offset}] = relocation;
    }
  }
  return linker;
}

const FunctionRange* ProgramLinker::function_starting_at(std::uint32_t section,
                                                         std::uint64_t insn) const {
  const auto found = function_at_.find({section, insn});
  return found == function_at_.end() ? nullptr : &functions_[found->second];
}

Expected<LinkedProgram> ProgramLinker::link(const FunctionRange& entry) const {
  return LinkRun(*this).run(entry);
}

}  // namespace userperf::bpf::loader
