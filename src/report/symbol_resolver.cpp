#include "report/symbol_resolver.hpp"

#include <algorithm>
#include <cstdio>

namespace userperf::report {

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

const std::string& SymbolResolver::kernel_function(std::uint64_t address) {
  static const std::string kNone;
  if (!kallsyms_loaded_) load_kallsyms();
  auto it = std::upper_bound(
      kallsyms_.begin(), kallsyms_.end(), address,
      [](std::uint64_t a, const KernelSymbol& symbol) { return a < symbol.address; });
  return it == kallsyms_.begin() ? kNone : std::prev(it)->name;
}

}  // namespace userperf::report
