#include "perfdata/elf_symbols.hpp"

#include <cxxabi.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace userperf::perfdata {

std::string demangle(const char* name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && out != nullptr ? out : name;
  std::free(out);
  return result;
}

namespace {

void read_functions(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr, std::vector<ElfFunction>& out) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr || shdr.sh_entsize == 0) return;
  const std::size_t count = shdr.sh_size / shdr.sh_entsize;
  for (std::size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) break;
    const int type = GELF_ST_TYPE(sym.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_value == 0) continue;
    const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
    if (name == nullptr || *name == '\0') continue;
    out.push_back({sym.st_value, sym.st_size, demangle(name)});
  }
}

}  // namespace

std::unique_ptr<ElfImage> ElfImage::load(const std::string& path) {
  auto image = std::make_unique<ElfImage>();
  if (elf_version(EV_CURRENT) == EV_NONE) return image;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return image;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (elf != nullptr && elf_kind(elf) == ELF_K_ELF) {
    std::size_t phnum = 0;
    if (elf_getphdrnum(elf, &phnum) == 0) {
      for (std::size_t i = 0; i < phnum; ++i) {
        GElf_Phdr phdr;
        if (gelf_getphdr(elf, static_cast<int>(i), &phdr) != nullptr && phdr.p_type == PT_LOAD) {
          image->segments.push_back({phdr.p_offset, phdr.p_vaddr, phdr.p_filesz});
        }
      }
    }
    std::vector<ElfFunction> symtab, dynsym;
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr) continue;
      if (shdr.sh_type == SHT_SYMTAB) read_functions(elf, scn, shdr, symtab);
      if (shdr.sh_type == SHT_DYNSYM) read_functions(elf, scn, shdr, dynsym);
    }
    image->functions = symtab.empty() ? std::move(dynsym) : std::move(symtab);
    std::sort(image->functions.begin(), image->functions.end(),
              [](const ElfFunction& a, const ElfFunction& b) { return a.address < b.address; });
    image->loaded = true;
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  return image;
}

const ElfFunction* ElfImage::function_at(std::uint64_t vaddr) const {
  auto it = std::upper_bound(functions.begin(), functions.end(), vaddr,
                             [](std::uint64_t a, const ElfFunction& f) { return a < f.address; });
  if (it == functions.begin()) return nullptr;
  --it;
  return vaddr - it->address < std::max<std::uint64_t>(it->size, 1) ? &*it : nullptr;
}

bool ElfImage::vaddr_of_offset(std::uint64_t offset, std::uint64_t& vaddr) const {
  for (const Segment& s : segments) {
    if (offset >= s.offset && offset - s.offset < s.filesz) {
      vaddr = offset - s.offset + s.vaddr;
      return true;
    }
  }
  return false;
}

void Symbolizer::add_mapping(std::uint32_t pid, std::uint64_t start, std::uint64_t len,
                             std::uint64_t pgoff, const std::string& path) {
  if (len == 0 || start + len < start) return;
  mappings_[pid][start] = Mapping{start + len, pgoff, path};
}

const ElfImage& Symbolizer::image(const std::string& path) {
  auto [it, fresh] = images_.try_emplace(path);
  if (fresh) it->second = ElfImage::load(path);
  return *it->second;
}

std::string Symbolizer::describe(std::uint32_t pid, std::uint64_t address) {
  auto process = mappings_.find(pid);
  if (process == mappings_.end()) return {};
  auto it = process->second.upper_bound(address);
  if (it == process->second.begin()) return {};
  --it;
  const std::uint64_t start = it->first;
  const Mapping& m = it->second;
  if (address >= m.end) return {};
  const ElfImage& elf = image(m.path);
  std::uint64_t vaddr = 0;
  const ElfFunction* fn = nullptr;
  if (elf.vaddr_of_offset(address - start + m.pgoff, vaddr)) fn = elf.function_at(vaddr);
  if (fn == nullptr) return "(" + m.path + ")";
  char offset[32];
  std::snprintf(offset, sizeof offset, "+0x%llx",
                static_cast<unsigned long long>(vaddr - fn->address));
  return fn->name + offset + " (" + m.path + ")";
}

}  // namespace userperf::perfdata
