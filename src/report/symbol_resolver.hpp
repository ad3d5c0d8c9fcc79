// The symbol tables a report names addresses with: each mapped ELF file (ElfFile, when the file
// exists on this machine), opened once; this machine's /proc/kallsyms for kernel addresses when it
// is readable (the file is assumed to come from the running kernel, as for the ELF files).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "report/address_space.hpp"
#include "report/elf_file.hpp"

namespace userperf::report {

class SymbolResolver {
 public:
  // The kernel function covering `address`, from /proc/kallsyms; "" when none does.
  const std::string& kernel_function(std::uint64_t address);

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
