// The text `userperf script -i FILE` prints: one line per record in file order, in the spirit of
// `perf script -D`'s summaries ("offset [size] time: PERF_RECORD_X fields"), samples with their
// event, pid/tid, cpu, ip (named by the caller's ScriptSymbols, if any), period, callchain, raw
// and aux sizes. A sample's AUX bytes are decoded with the
// trace decoder of its group leader's PMU (GROUP_DESC -> leader attr.type -> PMU_MAPPINGS name),
// one indented line per item; without a decoder the first 64 bytes are dumped in hex.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "perfdata/error.hpp"
#include "perfdata/reader.hpp"

namespace userperf::perfdata {

// Names the addresses of the records' processes. The printer lets it see every record, in file
// order, before printing it (so MMAP, COMM and FORK records have built the address spaces that
// later samples name), and asks it for names. report::ProcessSymbols is the implementation.
class ScriptSymbols {
 public:
  virtual ~ScriptSymbols() = default;
  virtual void observe(const RecordView& record) = 0;
  // "name+0xoff (path)", "(path)" when the mapped file has no symbol there, "" when nothing is
  // mapped at `address` in `pid`.
  virtual std::string describe(std::uint32_t pid, std::uint64_t address) = 0;
};

struct ScriptOptions {
  ScriptSymbols* symbols = nullptr;  // nullptr: addresses in hex only
};

// False with `error` (naming the file offset) at the first malformed record; the lines of the
// records before it have been printed.
bool print_script(const Reader& reader, std::FILE* out, const ScriptOptions& options, Error& error);

// "TRUNCATED|OVERWRITE|PARTIAL|COLLISION" for PERF_RECORD_AUX flags (PMU format bits as
// "format=0xNN", unknown bits in hex); "none" for 0.
std::string aux_flags_text(std::uint64_t flags);

// perf's name of a record type ("PERF_RECORD_MMAP2"), or "unknown type N": never empty, as it goes
// into messages about records a producer got wrong.
std::string record_type_name(std::uint32_t type);

}  // namespace userperf::perfdata
