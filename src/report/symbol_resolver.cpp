#include "report/symbol_resolver.hpp"

#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace userperf::report {

std::string short_name(const std::string& path) {
  if (std::uint32_t pid = 0; perf_map_pid(path, pid)) return "[JIT] tid " + std::to_string(pid);
  const std::size_t slash = path.rfind('/');
  if (path.empty() || path.front() == '[' || slash == std::string::npos) return path;
  return path.substr(slash + 1);
}

SymbolResolver::~SymbolResolver() {
  if (vdso_fd_ >= 0) close(vdso_fd_);
}

const ElfFile* SymbolResolver::image_of_mapping(const std::string& path) {
  if (is_perf_map(path)) return nullptr;
  if (!path.empty() && path.front() == '/') return &image(path);
  if (path != "[vdso]") return nullptr;
  if (!vdso_copied_) {
    vdso_copied_ = true;
    copy_vdso();
  }
  return vdso_fd_ < 0 ? nullptr : &image("/proc/self/fd/" + std::to_string(vdso_fd_));
}

void SymbolResolver::copy_vdso() {
  // The vDSO's extent from /proc/self/maps: its ELF header alone does not say how far it goes.
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return;
  unsigned long long start = 0, end = 0;
  char line[512];
  bool found = false;
  while (!found && std::fgets(line, sizeof line, maps) != nullptr) {
    found = std::strstr(line, "[vdso]") != nullptr &&
            std::sscanf(line, "%llx-%llx", &start, &end) == 2 && end > start;
  }
  std::fclose(maps);
  if (!found) return;
  const int fd = memfd_create("userperf-vdso", MFD_CLOEXEC);
  if (fd < 0) return;
  const auto* bytes = reinterpret_cast<const char*>(static_cast<std::uintptr_t>(start));
  std::size_t done = 0;
  while (done < end - start) {
    const ssize_t n = write(fd, bytes + done, end - start - done);
    if (n <= 0) {
      close(fd);
      return;
    }
    done += static_cast<std::size_t>(n);
  }
  vdso_fd_ = fd;
}

const PerfMap* SymbolResolver::perf_map(const std::string& path) {
  if (!is_perf_map(path)) return nullptr;
  auto [it, fresh] = perf_maps_.try_emplace(path);
  if (fresh) it->second = PerfMap::load(path);
  return &it->second;
}

const ElfFile& SymbolResolver::image(const std::string& path) {
  auto [it, fresh] = images_.try_emplace(path);
  if (fresh) it->second = ElfFile::open(path);
  return *it->second;
}

namespace {

struct KernelSymbol {
  std::uint64_t address;
  std::string name;
};

// This machine's kernel functions, sorted by address: read once per process (every resolver,
// and every report a process makes, names kernel addresses from the same running kernel).
const std::vector<KernelSymbol>& machine_kallsyms() {
  static const std::vector<KernelSymbol> symbols = [] {
    std::vector<KernelSymbol> out;
    std::FILE* file = std::fopen("/proc/kallsyms", "re");
    if (file == nullptr) return out;
    char line[512];
    while (std::fgets(line, sizeof line, file) != nullptr) {
      unsigned long long address = 0;
      char type = 0;
      char name[256];
      if (std::sscanf(line, "%llx %c %255s", &address, &type, name) != 3 || address == 0) continue;
      if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
      out.push_back({address, name});
    }
    std::fclose(file);
    std::sort(out.begin(), out.end(),
              [](const KernelSymbol& a, const KernelSymbol& b) { return a.address < b.address; });
    return out;
  }();
  return symbols;
}

}  // namespace

const std::string& SymbolResolver::kernel_function(std::uint64_t address) {
  static const std::string kNone;
  const std::vector<KernelSymbol>& kallsyms = machine_kallsyms();
  auto it = std::upper_bound(
      kallsyms.begin(), kallsyms.end(), address,
      [](std::uint64_t a, const KernelSymbol& symbol) { return a < symbol.address; });
  return it == kallsyms.begin() ? kNone : std::prev(it)->name;
}

}  // namespace userperf::report
