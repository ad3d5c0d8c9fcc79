// A perf.data file's samples as merged call stacks: the one model every view of `userperf report`
// reads (the tables and call graphs, the flame graph page, pprof, folded stacks, diffs).
//
// The model is pprof's: a stack is a list of Locations (one code address in one shared object),
// each Location names a Function, each Function lives in a Dso. Samples with the same event, thread
// and locations are merged into one Stack with their count and summed PERF_SAMPLE_PERIOD, so a
// million samples of a hundred thousand distinct stacks are a hundred thousand Stacks. A Location
// is made once per (shared object, address), whichever process mapped it where: symbolization is
// paid once per address, not per sample.
//
// Records are replayed in time order (perf's rings are per CPU, so a sample may precede in the file
// the MMAP it needs): MMAP/MMAP2/COMM/FORK build the address spaces, samples are resolved against
// them. Call chains come from PERF_SAMPLE_CALLCHAIN (frame pointers: return addresses, looked up at
// address - 1 like every caller frame) or, when the sample carries user registers and a stack
// copy, from unwinding that copy (DwarfUnwinder); kernel frames come from the callchain.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "perfdata/reader.hpp"
#include "support/expected.hpp"

namespace userperf::report {

using DsoId = std::uint32_t;
using FunctionId = std::uint32_t;
using LocationId = std::uint32_t;
using ThreadId = std::uint32_t;

// A shared object, the kernel, or nothing known ("[unknown]": an address no mapping covers).
struct Dso {
  std::string path;      // as mapped: "/usr/lib/x86_64-linux-gnu/libc.so.6", "[vdso]", ...
  std::string name;      // what tables show: the basename, "[kernel.kallsyms]", "[unknown]"
  std::string build_id;  // lower-case hex from the file's BUILD_ID feature or the ELF note; or ""
  bool kernel = false;
};

// A function of a Dso. An address of a Dso that no symbol covers gets that Dso's "[unknown]"
// function, so a stripped library keeps its own row instead of one "[unknown]" for the whole file.
struct Function {
  std::string name;  // demangled
  DsoId dso = 0;
  std::string file;  // source file from DWARF; "" when the Dso has no line information
  // The line DWARF declares it on (DW_AT_decl_line), else the line of its entry; 0 when unknown.
  std::uint32_t line = 0;
};

struct Location {
  DsoId dso = 0;
  // The address in the Dso's own terms: its link-time virtual address (what addr2line and pprof
  // take) for a file; the address as sampled for the kernel, for "[unknown]" and for a JIT's
  // /tmp/perf-PID.map; the offset into the mapping for a mapping that is not an ELF file on this
  // machine.
  std::uint64_t address = 0;
  FunctionId function = 0;
  std::uint32_t line = 0;  // DWARF's line of this address; 0 when unknown
  // A mapped file's address that no symbol covers has two names in perf's tables: the row of the
  // samples whose leaf it is shows the offset into the mapping (perf's map_ip: address - start +
  // pgoff), the rows and call-graph nodes of the chains it is in show the address as sampled (the
  // first one seen, when several processes map the file at different places).
  std::uint64_t map_address = 0, sampled_address = 0;
};

// A thread as its samples name it: the command is the one it had when sampled (exec changes it).
struct Thread {
  std::uint32_t pid = 0, tid = 0;
  std::string command;  // COMM; ":<tid>" for a thread the file says nothing of (as perf)
};

// Samples of one event and thread with the same call stack.
struct Stack {
  int event = 0;  // index into Profile::events (the file's attr order)
  ThreadId thread = 0;
  std::uint32_t first = 0;  // frames are Profile::frames[first, first + depth), leaf first
  std::uint32_t depth = 0;  // at least 1: a sample with no chain has its IP's location
  std::uint64_t samples = 0;
  std::uint64_t period = 0;  // sum of PERF_SAMPLE_PERIOD (else the attr's fixed period, else 1)
};

struct EventProfile {
  std::string name;  // EVENT_DESC's name, else perf's name for the attr ("cpu-clock", ...)
  perf_event_attr attr{};
  std::uint64_t samples = 0;
  std::uint64_t total_period = 0;
  // Whether its samples carry call chains (perf's --children and cumulative entries need them).
  bool chained() const { return (attr.sample_type & PERF_SAMPLE_CALLCHAIN) != 0; }
};

struct Profile {
  std::vector<EventProfile> events;  // one per attr, in attr order
  std::vector<Dso> dsos;
  std::vector<Function> functions;
  std::vector<Location> locations;
  std::vector<Thread> threads;
  std::vector<Stack> stacks;  // in order of first appearance
  std::vector<LocationId> frames;

  // PERF_RECORD_LOST_SAMPLES counts: perf report's "Total Lost Samples" (perf record, and userperf
  // record, write each event's lost samples as one at the end, those of full rings included).
  std::uint64_t lost_samples = 0;
  // PERF_RECORD_LOST records (perf's "lost chunks") and their counts: losses a ring reported
  // while it ran, also in the LOST_SAMPLES of a file that has them.
  std::uint64_t lost_records = 0;
  std::uint64_t lost_in_records = 0;
  std::uint64_t dwarf_samples = 0;  // samples whose user frames were unwound from a stack copy
  // What the report says on stderr besides its views: "/tmp/perf-42.map: 3 malformed lines
  // skipped" for a JIT map with lines that are not "START SIZE name".
  std::vector<std::string> notes;
  // perfdata::Reader::unfinished_note of the file: "" when its writer finished.
  std::string unfinished;

  std::span<const LocationId> frames_of(const Stack& stack) const {
    return {frames.data() + stack.first, stack.depth};
  }
  const Function& function_of(LocationId location) const {
    return functions[locations[location].function];
  }
  const Dso& dso_of(LocationId location) const { return dsos[locations[location].dso]; }
  // No mapping covers the location's address (a frame-pointer walk that left the stack, code no
  // MMAP announced): perf's tables give each such address its own row, named by the address.
  bool unmapped(LocationId location) const {
    const Dso& dso = dso_of(location);
    return !dso.kernel && dso.path == "[unknown]";
  }
  // No symbol names the location (perf's hist entry with no symbol): unmapped, or an address of a
  // Dso that no symbol covers.
  bool unresolved(LocationId location) const {
    return unmapped(location) || function_of(location).name == "[unknown]";
  }
  // An address of a mapped file that no symbol covers, whose two names (Location::map_address,
  // sampled_address) differ: perf gives it a row of each in a --children table.
  bool named_twice(LocationId location) const {
    const Location& l = locations[location];
    return !unmapped(location) && !dso_of(location).kernel && l.map_address != l.sampled_address &&
           function_of(location).name == "[unknown]";
  }
};

// One sample as it is counted: its event, thread and locations, leaf first.
struct ResolvedSample {
  const Profile& profile;
  int event = 0;
  ThreadId thread = 0;
  std::uint64_t period = 0;
  std::span<const LocationId> chain;
};

struct ProfileOptions {
  std::size_t max_frames = 127;  // perf's default --max-stack
  bool lines = false;            // look up DWARF source lines (Function::file/line, Location::line)
  // Called for every sample as it is counted (tests); may be empty.
  std::function<void(const ResolvedSample&)> on_sample;
  // Called about every 2 s while the file is read, with the bytes done and the file's data size
  // (the report's progress line); may be empty.
  std::function<void(std::uint64_t done, std::uint64_t total)> on_progress;
};

// The profile, or the first malformed record (malformed_at its file offset).
Expected<Profile> build_profile(const perfdata::Reader& reader, const ProfileOptions& options);

// perf's name for an attr without EVENT_DESC: "cpu-clock", "cycles", ... with perf's modifiers
// ("cpu-clock:uh"), else "type/config".
std::string event_name(const perf_event_attr& attr);

}  // namespace userperf::report
