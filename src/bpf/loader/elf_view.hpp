// The sections, symbols and relocations of a BPF object, read with libelf from bytes that
// check_elf_structure() accepted, copied out so nothing depends on libelf's lifetime.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/expected.hpp"

namespace userperf::bpf::loader {

struct ElfRelocation {
  std::uint64_t offset = 0;  // in the section it applies to
  std::uint32_t type = 0;    // R_BPF_*
  std::uint32_t symbol = 0;  // index into ElfView::symbols
};

struct ElfSection {
  std::uint32_t index = 0;
  std::string name;
  std::uint32_t type = 0;  // SHT_*
  std::uint64_t flags = 0;
  std::uint64_t size = 0;                  // sh_size (also for SHT_NOBITS)
  std::vector<std::uint8_t> bytes;         // empty for SHT_NOBITS
  std::vector<ElfRelocation> relocations;  // from the .rel section that targets this one
  bool executable() const;
};

struct ElfSymbol {
  std::string name;
  std::uint64_t value = 0;
  std::uint64_t size = 0;
  std::uint16_t section = 0;  // st_shndx
  std::uint8_t type = 0;      // STT_*
};

class ElfView {
 public:
  static Expected<ElfView> read(std::span<const std::uint8_t> checked_bytes);
  // Indexed by section number; entry 0 is the null section.
  const std::vector<ElfSection>& sections() const { return sections_; }
  const std::vector<ElfSymbol>& symbols() const { return symbols_; }
  const ElfSection* find(std::string_view name) const;
  // For rewriting instructions in place before linking (CO-RE relocations).
  ElfSection* find_mutable(std::string_view name);
  // The section a symbol is defined in, or nullptr (undefined, absolute, common).
  const ElfSection* section_of(const ElfSymbol& symbol) const;

 private:
  std::vector<ElfSection> sections_;
  std::vector<ElfSymbol> symbols_;
};

}  // namespace userperf::bpf::loader
