#include "bpf/loader/elf_check.hpp"

#include <elf.h>

#include <bit>
#include <cstring>
#include <string>

#include "bpf/isa/insn.hpp"
#include "bpf/loader/untrusted_bytes.hpp"

namespace userperf::bpf::loader {
namespace {

std::optional<Error> malformed(const std::string& what) {
  return make_error(EINVAL, "malformed ELF: " + what);
}

bool has_data(const Elf64_Shdr& shdr) {
  return shdr.sh_type != SHT_NULL && shdr.sh_type != SHT_NOBITS;
}

// A string table whose every offset below its size yields a terminated string.
bool is_terminated_strtab(std::span<const std::uint8_t> bytes, const Elf64_Shdr& shdr) {
  return shdr.sh_type == SHT_STRTAB && shdr.sh_size > 0 &&
         bytes[shdr.sh_offset + shdr.sh_size - 1] == 0;
}

std::optional<Error> check_header(std::span<const std::uint8_t> bytes, Elf64_Ehdr& ehdr) {
  if (bytes.size() < EI_NIDENT || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
    return make_error(EINVAL, "not an ELF file");
  }
  if (bytes[EI_CLASS] != ELFCLASS64) return malformed("not ELF64 (BPF objects are 64-bit)");
  const bool host_little = std::endian::native == std::endian::little;
  if (bytes[EI_DATA] != (host_little ? ELFDATA2LSB : ELFDATA2MSB)) {
    return malformed("byte order differs from the host's (built for the other bpfel/bpfeb target)");
  }
  if (bytes.size() < sizeof(Elf64_Ehdr)) return malformed("truncated ELF header");
  ehdr = read_at<Elf64_Ehdr>(bytes, 0);
  if (ehdr.e_machine != EM_BPF) {
    return malformed("machine " + std::to_string(ehdr.e_machine) + " is not EM_BPF (247)");
  }
  if (ehdr.e_type != ET_REL) return malformed("not a relocatable object (ET_REL)");
  if (ehdr.e_shoff == 0 || ehdr.e_shnum == 0) return malformed("no section headers");
  // Section indexes from SHN_LORESERVE up are special (SHN_ABS, ...), not sections.
  if (ehdr.e_shnum >= SHN_LORESERVE) return malformed("too many sections");
  if (ehdr.e_shentsize != sizeof(Elf64_Shdr)) return malformed("bad section header size");
  if (!fits(ehdr.e_shoff, std::uint64_t{ehdr.e_shnum} * sizeof(Elf64_Shdr), bytes.size())) {
    return malformed("section headers past the end of the file (truncated?)");
  }
  if (ehdr.e_shstrndx == SHN_UNDEF || ehdr.e_shstrndx >= ehdr.e_shnum) {
    return malformed("bad section name table index");
  }
  return std::nullopt;
}

// `section(i)`: section header i. A function symbol must lie inside its section: libbpf 1.1
// checks a program's st_value + st_size against its section with an addition that a st_size of
// -824 wraps, then mallocs st_size bytes (a 2026-11-29 campaign's input). Objects are left to
// libbpf's own checks, whose messages say more (an invalid kver section ...).
template <typename SectionOf>
std::optional<Error> check_symbols(std::span<const std::uint8_t> bytes, const Elf64_Shdr& symtab,
                                   const Elf64_Shdr& strtab, std::uint16_t shnum,
                                   const SectionOf& section) {
  if (symtab.sh_entsize != sizeof(Elf64_Sym) || symtab.sh_size % sizeof(Elf64_Sym) != 0) {
    return malformed("bad symbol table entry size");
  }
  if (!is_terminated_strtab(bytes, strtab)) return malformed("bad symbol string table");
  for (std::uint64_t off = 0; off < symtab.sh_size; off += sizeof(Elf64_Sym)) {
    const auto sym = read_at<Elf64_Sym>(bytes, symtab.sh_offset + off);
    if (sym.st_name >= strtab.sh_size) return malformed("symbol name outside the string table");
    const bool special =
        sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS || sym.st_shndx == SHN_COMMON;
    if (!special && sym.st_shndx >= shnum) {
      return malformed("symbol " + std::to_string(off / sizeof(Elf64_Sym)) +
                       " names a section that does not exist");
    }
    const unsigned type = ELF64_ST_TYPE(sym.st_info);
    if (!special && type == STT_FUNC) {
      const Elf64_Shdr home = section(sym.st_shndx);
      if (sym.st_value > home.sh_size || sym.st_size > home.sh_size - sym.st_value) {
        return malformed("symbol " + std::to_string(off / sizeof(Elf64_Sym)) + " (offset " +
                         std::to_string(sym.st_value) + ", size " + std::to_string(sym.st_size) +
                         ") lies outside its section of " + std::to_string(home.sh_size) +
                         " bytes");
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Error> check_elf_structure(std::span<const std::uint8_t> bytes) {
  Elf64_Ehdr ehdr{};
  if (auto error = check_header(bytes, ehdr)) return error;
  auto shdr = [&](std::uint64_t index) {
    return read_at<Elf64_Shdr>(bytes, ehdr.e_shoff + index * sizeof(Elf64_Shdr));
  };
  const Elf64_Shdr names = shdr(ehdr.e_shstrndx);
  if (!fits(names.sh_offset, names.sh_size, bytes.size()) || !is_terminated_strtab(bytes, names)) {
    return malformed("bad section name table");
  }
  std::uint64_t symtab_index = 0;
  for (std::uint64_t i = 1; i < ehdr.e_shnum; ++i) {
    const Elf64_Shdr s = shdr(i);
    const std::string where = "section " + std::to_string(i);
    if (s.sh_name >= names.sh_size) return malformed(where + ": name outside the name table");
    if (has_data(s) && !fits(s.sh_offset, s.sh_size, bytes.size())) {
      return malformed(where + ": data past the end of the file (truncated?)");
    }
    if (s.sh_link >= ehdr.e_shnum) return malformed(where + ": bad sh_link");
    if ((s.sh_flags & SHF_EXECINSTR) && s.sh_size % sizeof(Insn) != 0) {
      return malformed(where + ": size is not a whole number of instructions");
    }
    if (s.sh_type == SHT_SYMTAB) {
      if (symtab_index != 0) return malformed("more than one symbol table");
      symtab_index = i;
    }
  }
  if (symtab_index == 0) return malformed("no symbol table");
  const Elf64_Shdr symtab = shdr(symtab_index);
  if (auto error = check_symbols(bytes, symtab, shdr(symtab.sh_link), ehdr.e_shnum, shdr)) {
    return error;
  }
  for (std::uint64_t i = 1; i < ehdr.e_shnum; ++i) {
    const Elf64_Shdr s = shdr(i);
    if (s.sh_type != SHT_REL) continue;
    if (s.sh_entsize != sizeof(Elf64_Rel) || s.sh_size % sizeof(Elf64_Rel) != 0 ||
        s.sh_link != symtab_index || s.sh_info == 0 || s.sh_info >= ehdr.e_shnum) {
      return malformed("relocation section " + std::to_string(i) + " is inconsistent");
    }
  }
  return std::nullopt;
}

}  // namespace userperf::bpf::loader
