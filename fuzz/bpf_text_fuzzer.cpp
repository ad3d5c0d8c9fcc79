// Text -> the conformance file parser and the assembler, then the disassembler over what
// assembled. The disassembler promises assemble(disassemble(p)) == p for every program
// (disassembler.hpp): checked for the assembled program, with and without helper names, and for
// the file's `-- raw` words taken as a program of their own. An input with no `-- asm` section is
// assembled whole (the verifier corpus's .asm files), every map name resolving to an index.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bpf/isa/assembler.hpp"
#include "bpf/isa/conformance_file.hpp"
#include "bpf/isa/disassembler.hpp"

using namespace userperf::bpf;

namespace {

[[noreturn]] void fail(const char* what, std::span<const Insn> program, const std::string& text) {
  std::fprintf(stderr, "bpf_text: %s\nprogram (%zu insns), disassembly:\n%s\n", what,
               program.size(), text.c_str());
  std::abort();
}

// assemble(disassemble(program)) must give `program` back, bit for bit.
void check_round_trip(std::span<const Insn> program, bool helper_names) {
  DisassembleOptions options;
  options.helper_names = helper_names;
  const std::string text = disassemble(program, options);
  for (std::size_t i = 0; i < program.size(); i += insn_slots(program, i)) {
    if (insn_slots(program, i) == 0) fail("insn_slots gave 0", program, text);
  }
  auto again = assemble(text);
  if (!again) {
    fail(("the disassembly does not assemble: " + again.error().message).c_str(), program, text);
  }
  if (again->size() != program.size() ||
      (!program.empty() &&
       std::memcmp(again->data(), program.data(), program.size() * sizeof(Insn)) != 0)) {
    fail("the disassembly assembles to other instructions", program, text);
  }
}

std::optional<std::uint32_t> any_map(std::string_view name) {
  std::uint32_t index = 0;
  for (char c : name) index = index * 31 + static_cast<unsigned char>(c);
  return index % 8;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  AssembleOptions options;
  options.map_index = any_map;
  std::string_view asm_text = text;
  std::optional<ConformanceFile> file;
  if (text.find("-- asm") != std::string_view::npos) {
    auto parsed = parse_conformance_file(text);
    if (!parsed) return 0;
    file = std::move(*parsed);
    asm_text = file->asm_text;
    options.first_line = file->asm_first_line;
    if (!file->raw.empty()) {
      std::vector<Insn> raw(file->raw.size());
      std::memcpy(raw.data(), file->raw.data(), raw.size() * sizeof(Insn));
      check_round_trip(raw, false);
    }
  }
  auto program = assemble(asm_text, options);
  if (!program) return 0;
  check_round_trip(*program, false);
  check_round_trip(*program, true);
  return 0;
}
