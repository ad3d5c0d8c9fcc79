// Symbolization of user addresses for `userperf script`: the MMAP/MMAP2 records of a file say which
// ELF file is mapped where in which process, and the function symbols (.symtab, else .dynsym) of
// those files, read with libelf when they exist on this machine, name the addresses.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace userperf::perfdata {

// C++ (Itanium ABI) names demangled; others as they are. Shared by every symbolizer.
std::string demangle(const char* name);

struct ElfFunction {
  std::uint64_t address = 0;  // st_value (link-time virtual address)
  std::uint64_t size = 0;
  std::string name;  // demangled
};

// The functions and loadable segments of one ELF file; empty when it is missing or not ELF.
struct ElfImage {
  struct Segment {
    std::uint64_t offset = 0, vaddr = 0, filesz = 0;
  };
  std::vector<Segment> segments;       // PT_LOAD
  std::vector<ElfFunction> functions;  // sorted by address
  bool loaded = false;

  static std::unique_ptr<ElfImage> load(const std::string& path);
  // The function containing link-time address `vaddr`, or nullptr.
  const ElfFunction* function_at(std::uint64_t vaddr) const;
  // The link-time address of file offset `offset`, or false when no segment maps it.
  bool vaddr_of_offset(std::uint64_t offset, std::uint64_t& vaddr) const;
};

class Symbolizer {
 public:
  // From an MMAP or MMAP2 record: `path` mapped at [start, start + len) from file offset pgoff.
  void add_mapping(std::uint32_t pid, std::uint64_t start, std::uint64_t len, std::uint64_t pgoff,
                   const std::string& path);
  // "name+0xoff (path)", "(path)" when the file has no symbol there, "" when no mapping holds it.
  std::string describe(std::uint32_t pid, std::uint64_t address);

 private:
  struct Mapping {
    std::uint64_t end = 0, pgoff = 0;
    std::string path;
  };
  const ElfImage& image(const std::string& path);

  std::map<std::uint32_t, std::map<std::uint64_t, Mapping>> mappings_;  // pid -> start -> mapping
  std::map<std::string, std::unique_ptr<ElfImage>> images_;
};

}  // namespace userperf::perfdata
