// Names a code address of a sampled process: the shared object that maps it and the function
// symbol there (ElfFile, when the file exists on this machine). Kernel addresses are named from
// this machine's /proc/kallsyms when it is readable (the file is assumed to come from the running
// kernel, as for the ELF files); else [unknown].
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "report/address_space.hpp"
#include "report/elf_file.hpp"

namespace userperf::report {

struct Location {
  std::string dso;     // short name: the file's basename, "[kernel.kallsyms]", "[unknown]"
  std::string symbol;  // "[unknown]" when no symbol covers the address
  bool kernel = false;
};

class SymbolResolver {
 public:
  Location user(const AddressSpace& space, std::uint64_t address);
  Location kernel(std::uint64_t address);

  // The mapped ELF file (cached); an image with loaded false when missing or not ELF.
  const ElfFile& image(const std::string& path);

 private:
  struct KernelSymbol {
    std::uint64_t address;
    std::string name;
  };
  void load_kallsyms();

  std::map<std::string, std::unique_ptr<ElfFile>> images_;
  std::vector<KernelSymbol> kallsyms_;  // sorted by address
  bool kallsyms_loaded_ = false;
};

// "libc.so.6" for "/usr/lib/x86_64-linux-gnu/libc.so.6"; "[vdso]" stays as it is.
std::string short_name(const std::string& path);

}  // namespace userperf::report
