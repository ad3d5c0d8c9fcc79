// A JIT's symbol file, /tmp/perf-PID.map (perf's Documentation/jit-interface.txt): one line
// "START SIZE name" per piece of generated code, START and SIZE in hex without 0x, the name the
// rest of the line. Node (--perf-basic-prof), the JVM's perf-map agent, LuaJIT and Python 3.12
// (-X perf) write it while they run; perf report names the samples of the process's anonymous
// code from it, and so does `userperf report`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace userperf::report {

class PerfMap {
 public:
  struct Symbol {
    const std::string* name;  // the line's name
    std::uint64_t start;      // the line's START (an address may be past it, when it is a part)
  };

  // The map of `text`. A line that is not "START SIZE name" (1 to 16 hex digits each, single
  // spaces, a name, START + SIZE not past 2^64) is skipped and counted; so is no line. An entry of
  // size 0 covers nothing. Where entries overlap, the later line wins (a JIT that reuses an
  // address writes the new code's line after the old one's).
  static PerfMap parse(std::string_view text);
  // The map in file `path`; an empty one (loaded() false) when it cannot be read.
  static PerfMap load(const std::string& path);

  // The symbol covering `address` into `out`; false when none does.
  bool find(std::uint64_t address, Symbol& out) const;
  bool loaded() const { return loaded_; }
  std::size_t names() const { return names_.size(); }   // entries kept
  std::size_t malformed() const { return malformed_; }  // lines skipped

 private:
  struct Range {
    std::uint64_t start, end;  // [start, end), disjoint from every other range
    std::uint64_t symbol_start;
    std::uint32_t name;  // index into names_
  };
  std::vector<std::string> names_;
  std::vector<Range> ranges_;  // sorted by start
  std::size_t malformed_ = 0;
  bool loaded_ = false;
};

// Whether `path` names a perf map ("/tmp/perf-PID.map", as perf's perf_pid_map_tid reads it),
// and the pid it is for.
bool perf_map_pid(std::string_view path, std::uint32_t& pid);
inline bool is_perf_map(std::string_view path) {
  std::uint32_t pid = 0;
  return perf_map_pid(path, pid);
}
// "/tmp/perf-PID.map": the map perf report reads for anonymous code of process `pid`.
std::string perf_map_path(std::uint32_t pid);
// Whether code mapped under `path` is named from its process's perf map, as perf's map__new
// decides: anonymous memory ("//anon", "/dev/zero", "/anon_hugepage") and memory of no file
// ("[heap]", "[stack...", "/SYSV..."), when executable.
bool named_by_perf_map(std::string_view path, std::uint32_t prot);

}  // namespace userperf::report
