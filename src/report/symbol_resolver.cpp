#include "report/symbol_resolver.hpp"

#include <algorithm>
#include <cstdio>

namespace userperf::report {

namespace {
constexpr const char* kUnknown = "[unknown]";
}  // namespace

std::string short_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (path.empty() || path.front() == '[' || slash == std::string::npos) return path;
  return path.substr(slash + 1);
}

const ElfFile& SymbolResolver::image(const std::string& path) {
  auto [it, fresh] = images_.try_emplace(path);
  if (fresh) it->second = ElfFile::open(path);
  return *it->second;
}

Location SymbolResolver::user(const AddressSpace& space, std::uint64_t address) {
  const Mapping* mapping = space.find(address);
  if (mapping == nullptr) return {kUnknown, kUnknown, false};
  Location location{short_name(mapping->path), kUnknown, false};
  std::uint64_t vaddr = 0;
  if (mapping->path.empty() || mapping->path.front() != '/') return location;
  const ElfFile& elf = image(mapping->path);
  if (elf.vaddr_of_offset(address - mapping->start + mapping->pgoff, vaddr)) {
    std::string name = elf.function_at(vaddr);
    if (!name.empty()) location.symbol = std::move(name);
  }
  return location;
}

void SymbolResolver::load_kallsyms() {
  kallsyms_loaded_ = true;
  std::FILE* file = std::fopen("/proc/kallsyms", "re");
  if (file == nullptr) return;
  char line[512];
  while (std::fgets(line, sizeof line, file) != nullptr) {
    unsigned long long address = 0;
    char type = 0;
    char name[256];
    if (std::sscanf(line, "%llx %c %255s", &address, &type, name) != 3 || address == 0) continue;
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    kallsyms_.push_back({address, name});
  }
  std::fclose(file);
  std::sort(kallsyms_.begin(), kallsyms_.end(),
            [](const KernelSymbol& a, const KernelSymbol& b) { return a.address < b.address; });
}

Location SymbolResolver::kernel(std::uint64_t address) {
  if (!kallsyms_loaded_) load_kallsyms();
  Location location{"[kernel.kallsyms]", kUnknown, true};
  auto it = std::upper_bound(
      kallsyms_.begin(), kallsyms_.end(), address,
      [](std::uint64_t a, const KernelSymbol& symbol) { return a < symbol.address; });
  if (it != kallsyms_.begin()) location.symbol = std::prev(it)->name;
  return location;
}

}  // namespace userperf::report
