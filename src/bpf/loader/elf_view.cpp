#include "bpf/loader/elf_view.hpp"

#include <gelf.h>
#include <libelf.h>

#include <memory>
#include <utility>

namespace userperf::bpf::loader {
namespace {

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};
using ElfHandle = std::unique_ptr<Elf, ElfCloser>;

Error libelf_error(const std::string& what) {
  const char* message = elf_errmsg(-1);
  return make_error(EINVAL, "libelf: " + what + ": " + (message ? message : "unknown error"));
}

std::vector<ElfRelocation> read_relocations(Elf_Scn* scn) {
  std::vector<ElfRelocation> relocations;
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr) return relocations;
  const std::size_t count = data->d_size / sizeof(Elf64_Rel);
  for (std::size_t i = 0; i < count; ++i) {
    GElf_Rel rel;
    if (gelf_getrel(data, static_cast<int>(i), &rel) == nullptr) break;
    relocations.push_back({rel.r_offset, static_cast<std::uint32_t>(GELF_R_TYPE(rel.r_info)),
                           static_cast<std::uint32_t>(GELF_R_SYM(rel.r_info))});
  }
  return relocations;
}

}  // namespace

bool ElfSection::executable() const {
  return type == SHT_PROGBITS && (flags & SHF_EXECINSTR) != 0;
}

Expected<ElfView> ElfView::read(std::span<const std::uint8_t> checked_bytes) {
  if (elf_version(EV_CURRENT) == EV_NONE) return libelf_error("initialisation");
  // elf_memory takes a mutable image; reading never writes to a same-byte-order image.
  ElfHandle elf(elf_memory(reinterpret_cast<char*>(const_cast<std::uint8_t*>(checked_bytes.data())),
                           checked_bytes.size()));
  if (!elf) return libelf_error("elf_memory");
  std::size_t shnum = 0;
  std::size_t shstrndx = 0;
  if (elf_getshdrnum(elf.get(), &shnum) != 0 || elf_getshdrstrndx(elf.get(), &shstrndx) != 0) {
    return libelf_error("section header table");
  }
  ElfView view;
  view.sections_.resize(shnum);
  std::vector<std::pair<std::size_t, Elf_Scn*>> rel_sections;  // (target, scn)
  Elf_Scn* symtab = nullptr;
  std::size_t symtab_strings = 0;
  for (std::size_t i = 1; i < shnum; ++i) {
    Elf_Scn* scn = elf_getscn(elf.get(), i);
    GElf_Shdr shdr;
    if (scn == nullptr || gelf_getshdr(scn, &shdr) == nullptr) {
      return libelf_error("section " + std::to_string(i));
    }
    ElfSection& section = view.sections_[i];
    section.index = static_cast<std::uint32_t>(i);
    const char* name = elf_strptr(elf.get(), shstrndx, shdr.sh_name);
    section.name = name ? name : "";
    section.type = shdr.sh_type;
    section.flags = shdr.sh_flags;
    section.size = shdr.sh_size;
    if (shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0) {
      Elf_Data* data = elf_rawdata(scn, nullptr);
      if (data == nullptr || data->d_size != shdr.sh_size || data->d_buf == nullptr) {
        return libelf_error("data of section " + section.name);
      }
      const auto* begin = static_cast<const std::uint8_t*>(data->d_buf);
      section.bytes.assign(begin, begin + data->d_size);
    }
    if (shdr.sh_type == SHT_REL) rel_sections.emplace_back(shdr.sh_info, scn);
    if (shdr.sh_type == SHT_SYMTAB) {
      symtab = scn;
      symtab_strings = shdr.sh_link;
    }
  }
  if (symtab != nullptr) {
    Elf_Data* data = elf_getdata(symtab, nullptr);
    const std::size_t count = data ? data->d_size / sizeof(Elf64_Sym) : 0;
    for (std::size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) return libelf_error("symbol");
      const char* name = elf_strptr(elf.get(), symtab_strings, sym.st_name);
      view.symbols_.push_back({name ? name : "", sym.st_value, sym.st_size, sym.st_shndx,
                               static_cast<std::uint8_t>(GELF_ST_TYPE(sym.st_info))});
    }
  }
  for (auto& [target, scn] : rel_sections) {
    auto relocations = read_relocations(scn);
    auto& into = view.sections_[target].relocations;
    into.insert(into.end(), relocations.begin(), relocations.end());
  }
  return view;
}

const ElfSection* ElfView::find(std::string_view name) const {
  for (const ElfSection& section : sections_) {
    if (section.index != 0 && section.name == name) return &section;
  }
  return nullptr;
}

ElfSection* ElfView::find_mutable(std::string_view name) {
  return const_cast<ElfSection*>(std::as_const(*this).find(name));
}

const ElfSection* ElfView::section_of(const ElfSymbol& symbol) const {
  if (symbol.section == SHN_UNDEF || symbol.section >= sections_.size()) return nullptr;
  return &sections_[symbol.section];
}

}  // namespace userperf::bpf::loader
