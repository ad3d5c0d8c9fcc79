// The address of a function another process has loaded: its C library's dlopen, dlsym and
// dlerror, found in the library's .dynsym (the symbols its loader exports) and moved by the load
// bias its /proc/PID/maps mapping shows. Read from the file with bounded reads: a reader never
// trusts a file it did not write.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/expected.hpp"

namespace userperf::record {

// An ELF shared object's exported (defined) functions: name -> st_value.
struct DynamicSymbols {
  std::uint64_t first_load_vaddr = 0;  // the lowest PT_LOAD's p_vaddr, page-aligned
  std::vector<std::pair<std::string, std::uint64_t>> functions;
  // 0 when absent.
  std::uint64_t find(const std::string& name) const;
};

// Parses `bytes`, an x86-64 ELF64 shared object (ENOEXEC with where it is malformed otherwise).
Expected<DynamicSymbols> parse_dynamic_symbols(const std::vector<std::uint8_t>& bytes);

// One line of /proc/PID/maps.
struct ProcessMapping {
  std::uint64_t start = 0, end = 0, offset = 0;
  bool executable = false;
  std::string path;  // "" for an anonymous mapping
  bool contains(std::uint64_t address) const { return address >= start && address < end; }
};
// Every mapping of process `pid`; empty when /proc/PID/maps is unreadable (or the process is gone).
std::vector<ProcessMapping> read_process_maps(pid_t pid);

// A mapped object of another process: its path, as /proc/PID/maps names it, and where the mapping
// of its file offset 0 starts (its load base).
struct LoadedObject {
  std::string path;
  std::uint64_t base = 0;
};

// The objects of /proc/PID/maps whose file name (the last path component) starts with `prefix`
// ("libc.so", "ld-linux"); empty when none (or /proc/PID/maps is unreadable).
std::vector<LoadedObject> loaded_objects(pid_t pid, const std::string& prefix);

// The run-time address of function `name` of `object` in process `pid`: the file is read through
// /proc/PID/root (the process's view of the file system), else by its path. 0 with no error when
// the object does not export it. A file's symbols are parsed once (kept by device, inode, size and
// modification time).
Expected<std::uint64_t> remote_function(pid_t pid, const LoadedObject& object,
                                        const std::string& name);

}  // namespace userperf::record
