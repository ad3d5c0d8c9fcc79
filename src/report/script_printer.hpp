// The text `userperf script -i FILE` prints: one line per record in file order, in the spirit of
// `perf script -D`'s summaries ("offset [size] time: PERF_RECORD_X fields"), samples with their
// event, pid/tid, cpu, ip (named by the report's ProcessSymbols, if given), period, callchain, raw
// and aux sizes. A sample's AUX bytes are decoded with the
// trace decoder of its group leader's PMU (GROUP_DESC -> leader attr.type -> PMU_MAPPINGS name),
// one indented line per item; without a decoder the first 64 bytes are dumped in hex.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "perfdata/reader.hpp"
#include "report/process_symbols.hpp"
#include "support/expected.hpp"

namespace userperf::report {

struct ScriptOptions {
  // Sees every record in file order before it is printed (so MMAP, COMM and FORK records have
  // built the address spaces that later samples name), and names addresses. nullptr: hex only.
  ProcessSymbols* symbols = nullptr;
  // Told what the file lacks when its writer never finished (Reader::unfinished_note), after the
  // last record: the command says it on stderr.
  std::function<void(const std::string&)> on_note;
};

// The first malformed record is malformed_at its file offset; the lines of the records before it
// have been printed.
Expected<void> print_script(const perfdata::Reader& reader, std::FILE* out,
                            const ScriptOptions& options);

// "TRUNCATED|OVERWRITE|PARTIAL|COLLISION" for PERF_RECORD_AUX flags (PMU format bits as
// "format=0xNN", unknown bits in hex); "none" for 0.
std::string aux_flags_text(std::uint64_t flags);

}  // namespace userperf::report
