// The symbol tables a report names addresses with: each mapped ELF file (ElfFile, when the file
// exists on this machine), opened once; this machine's /proc/kallsyms for kernel addresses when it
// is readable (the file is assumed to come from the running kernel, as for the ELF files; read
// once per process).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "report/address_space.hpp"
#include "report/elf_file.hpp"
#include "report/perf_map.hpp"

namespace userperf::report {

class SymbolResolver {
 public:
  SymbolResolver() = default;
  ~SymbolResolver();
  SymbolResolver(const SymbolResolver&) = delete;
  SymbolResolver& operator=(const SymbolResolver&) = delete;

  // The kernel function covering `address`, from /proc/kallsyms; "" when none does.
  const std::string& kernel_function(std::uint64_t address);

  // The mapped ELF file (cached); an image with loaded false when missing or not ELF.
  const ElfFile& image(const std::string& path);
  // The ELF image behind a mapping's path: the file for a path, this machine's vDSO for
  // "[vdso]" (assumed to be the sampled kernel's, as kallsyms is; perf reads it the same way),
  // nullptr for what is no ELF file ("[heap]", "//anon", a JIT's /tmp/perf-PID.map).
  const ElfFile* image_of_mapping(const std::string& path);
  // The JIT symbols of a mapping whose path is a perf map (/tmp/perf-PID.map, read once, as it is
  // when the report runs: the JIT appends to it while the program runs); nullptr for any other
  // path. A map that cannot be read has no symbols.
  const PerfMap* perf_map(const std::string& path);
  // The perf maps read so far, by path.
  const std::map<std::string, PerfMap>& perf_maps() const { return perf_maps_; }

 private:
  void copy_vdso();

  std::map<std::string, std::unique_ptr<ElfFile>> images_;
  std::map<std::string, PerfMap> perf_maps_;
  int vdso_fd_ = -1;  // a memfd holding this process's vDSO, made at the first "[vdso]"
  bool vdso_copied_ = false;
};

// "libc.so.6" for "/usr/lib/x86_64-linux-gnu/libc.so.6"; "[vdso]" stays as it is; "[JIT] tid 42"
// for "/tmp/perf-42.map", as perf's dso__set_basename names a JIT's map.
std::string short_name(const std::string& path);

}  // namespace userperf::report
