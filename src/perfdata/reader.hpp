// perfdata::Reader: opens a file-mode perf.data file and validates all of it before use. Nothing
// in the file is trusted: every offset, size and count is checked against the file, and a corrupt
// file gives an Error whose message names the file offset of the bad field - never a crash or a
// read outside the file.
//
// An unfinished file (data.size 0 and no feature bits: a writer that never reached finish(), see
// writer.hpp) opens with complete() false; its records are read up to the end of the file and a
// torn last record ends the walk quietly (truncated_tail() says how many bytes it had).
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "perfdata/features.hpp"
#include "perfdata/format.hpp"
#include "perfdata/id_layout.hpp"
#include "perfdata/malformed.hpp"

namespace userperf::perfdata {

struct AttrEntry {
  perf_event_attr attr{};  // zero-extended when written smaller than this header's struct
  std::uint32_t size = 0;  // bytes of attr in the file
  std::uint64_t offset = 0;
  std::vector<std::uint64_t> ids;
};

struct FeatureSection {
  int feature = 0;
  FileSection section;
};

struct RecordView {
  perf_event_header header{};
  std::span<const std::uint8_t> bytes;  // header.size bytes, header included
  std::span<const std::uint8_t>
      payload;               // data perf places after the record (AUXTRACE, TRACING_DATA)
  std::uint64_t offset = 0;  // file offset of the header
};

class Reader;

// Walks the data section in file order.
class RecordCursor {
 public:
  enum class Next { kRecord, kEnd, kError };
  explicit RecordCursor(const Reader& reader);
  Next next(RecordView& out);
  // Whether next() said kError, and why (error() is valid when failed()).
  bool failed() const { return failed_; }
  const Error& error() const { return error_; }
  // Bytes of a torn last record of an unfinished file (0 otherwise), known at kEnd.
  std::uint64_t truncated_tail() const { return tail_; }

 private:
  Next fail(std::uint64_t offset, const std::string& what);
  const Reader& reader_;
  std::uint64_t pos_;
  std::uint64_t tail_ = 0;
  bool failed_ = false;
  Error error_;
};

class Reader {
 public:
  // The file parsed and checked whole, or the first problem (malformed_at: EINVAL with the offset
  // of the bad field; open's own errno for a file that cannot be opened or mapped).
  static Expected<std::unique_ptr<Reader>> open(const std::string& path);
  static Expected<std::unique_ptr<Reader>> from_bytes(std::vector<std::uint8_t> bytes);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const FileHeader& header() const { return header_; }
  bool complete() const { return complete_; }
  // Whether the writer reached its end: the header lists features (perf record and `userperf
  // record` always write some), or it is the 72-byte header of files older than features.
  bool finished() const { return finished_; }
  // What a reader says of a file whose writer never finished (a recorder killed, a full disk):
  // "" for a finished file, else which records are read and which bytes are not. `torn_tail` is
  // the cursor's truncated_tail() after its walk.
  std::string unfinished_note(std::uint64_t torn_tail) const;
  const std::vector<AttrEntry>& attrs() const { return attrs_; }
  const Features& features() const { return features_; }
  const std::vector<FeatureSection>& feature_sections() const { return sections_; }
  std::span<const std::uint8_t> file() const { return file_; }
  std::uint64_t data_begin() const { return header_.data.offset; }
  std::uint64_t data_end() const { return data_end_; }

  RecordCursor records() const { return RecordCursor(*this); }

  // The attr a record belongs to: its id through the ids arrays, or the only attr. -1 when the
  // record carries no id that is listed (and for perf-tool records).
  int attr_index(const RecordView& record) const;
  // The index of the attr listing `id`, or -1.
  int attr_index_of_id(std::uint64_t id) const;

 private:
  Reader() = default;
  Expected<void> parse();
  Expected<void> parse_attrs();
  Expected<void> parse_features();

  std::span<const std::uint8_t> file_;
  void* mapping_ = nullptr;
  std::size_t mapping_size_ = 0;
  std::vector<std::uint8_t> owned_;
  FileHeader header_;
  bool complete_ = true;
  bool finished_ = true;
  std::uint64_t data_end_ = 0;
  std::vector<AttrEntry> attrs_;
  std::unordered_map<std::uint64_t, int> attr_by_id_;
  IdLayout id_layout_;
  Features features_;
  std::vector<FeatureSection> sections_;
};

}  // namespace userperf::perfdata
