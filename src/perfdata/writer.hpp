// perfdata::Writer: writes a perf.data file in file mode ("PERFILE2", kernel-perf-spec §7.1) that
// perf 6.1 reads: header, attrs with their id arrays, the records given, then at finish() the
// feature index and bodies.
//
// Layout: header (104) | attrs (attr.size + 16 each) | ids arrays | data | feature index | bodies
// [| ids arrays of attrs that got ids after the first record].
//
// Ids may be added to an attr at any time before finish() (add_ids): a recorder learns them as
// threads appear. Ids known when the first record is appended are written before the data; an attr
// that got more ids later has its whole id array written after the feature bodies at finish(), and
// its attr entry's id section rewritten in place (before the header). A file that never finished
// keeps the id sections of the first record's time (empty for attrs whose ids came later): its
// records still read, but records of ids added later map to no attr.
//
// Crash semantics: the header is written with data.size = 0 and no feature bits when the first
// record is appended, rewritten with the data size so far by each checkpoint(), and rewritten
// whole (one 104-byte pwrite, after fdatasync of everything before it) at the end of finish(). A
// file whose writer never finished nor checkpointed - crash, kill, a write error - says data.size
// 0: perf warns "Was the 'perf record' command properly terminated?", and perfdata::Reader reports
// it incomplete and reads records up to the last whole one. A failed finish() truncates the file
// back to the end of the data, so no partial feature bytes follow it. finish() on a file without
// records appends one FINISHED_ROUND, so that a finished file never says data.size 0. Records still
// in the write buffer at a crash are lost (see flush()).
//
// Not signal-safe: it allocates and writes. A recorder drains rings into it from a normal thread.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "perfdata/features.hpp"
#include "perfdata/format.hpp"
#include "support/expected.hpp"

namespace userperf::perfdata {

class Writer {
 public:
  // Creates or truncates `path`; open(2)'s errno if it cannot.
  static Expected<std::unique_ptr<Writer>> create(const std::string& path);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Adds an attr and the ids its records carry (PERF_EVENT_IOC_ID values). Only before the first
  // record. `attr.size` bytes are written (0 means 64); every attr must have the same size (perf
  // derives the attr count from one size), and several attrs must locate the id alike
  // (id_layout_conflict). Returns the attr's index, -1 on error.
  int add_attr(const perf_event_attr& attr, std::span<const std::uint64_t> ids);

  // Adds ids to attr `index`, at any time before finish() (see the layout above). False (and
  // nothing changes) when there is no attr `index`; fails the writer after finish().
  bool add_ids(int index, std::span<const std::uint64_t> ids);

  // Appends one record, header included, exactly as a kernel ring holds it (a ring::Record's
  // bytes can be passed straight in: they are copied once, into the write buffer, or written
  // directly when larger than it). Checked: header.size >= 8, a multiple of 8, equal to
  // bytes.size(), and a kernel record type (< PERF_RECORD_MAX) - perf aborts on types it does not
  // know, and AUXTRACE_INFO/AUXTRACE are never written (perf has no decoder for userperf's AUX).
  bool append(std::span<const std::uint8_t> record);
  // PERF_RECORD_FINISHED_ROUND: everything before it may be sorted by time and flushed.
  bool append_finished_round();

  // Names attr `index` in EVENT_DESC (perf shows it instead of "unknown attr type: N"); finish()
  // writes the feature, with the attrs and their ids, when any attr was named. False (and nothing
  // else changes) when there is no attr `index`.
  bool set_event_name(int index, std::string name);

  // Feature values written by finish(). Groups must fit the attrs (check_groups).
  Features& features() { return features_; }

  // Hands the buffered bytes (up to 256 KiB of records) to the kernel, so that a crash of this
  // process after it loses none of them. Not a sync: that is finish()'s.
  bool flush();

  // flush(), then rewrites the header with the data size so far (no features): a file whose
  // writer then dies (kill -9, a disk that fills) is read up to here as a whole file - perf
  // without a warning, perfdata::Reader as complete. Ids added after the first record are not in
  // it (finish() writes them): with several attrs, records of such ids map to none. One write of
  // the buffer and one 104-byte pwrite, no sync; nothing when no record came since the last one.
  bool checkpoint();
  // Writes the data size, the feature index and bodies, syncs and rewrites the header, closes.
  bool finish();

  // The writer fails as a stream does: every call after the first failure fails too, and error()
  // keeps the first one (valid when failed()).
  bool failed() const { return failed_; }
  const Error& error() const { return error_; }
  std::uint64_t data_size() const { return data_size_; }
  // The data size the header says since the last checkpoint() (0 before it): what a reader gets
  // of a file whose writer failed or died after it.
  std::uint64_t checkpointed_size() const { return checkpointed_size_; }
  std::size_t attr_count() const { return attrs_.size(); }

 private:
  Writer(int fd, std::string path);
  bool begin_data();
  bool write_late_ids();  // finish(): id arrays that grew after begin_data, and their sections
  bool write_bytes(const void* bytes, std::size_t size);  // buffered, at the end of the file
  bool fail(int code, const std::string& what);
  bool fail_errno(const std::string& what);

  struct Attr {
    std::vector<std::uint8_t> bytes;  // attr.size bytes
    std::vector<std::uint64_t> ids;
    std::size_t ids_before_data = 0;  // ids written before the data by begin_data()
    std::string name;                 // for EVENT_DESC; empty: unnamed
  };

  int fd_;
  std::string path_;
  std::vector<Attr> attrs_;
  perf_event_attr first_attr_{};
  Features features_;
  FileHeader header_;
  bool data_started_ = false;
  bool finished_ = false;
  std::uint64_t file_pos_ = 0;  // bytes written to the file so far
  std::uint64_t data_size_ = 0;
  std::uint64_t checkpointed_size_ = 0;  // data size in the header since the last checkpoint()
  // kBufferSize bytes, left uninitialized: a recording that writes little touches few pages.
  std::unique_ptr<std::uint8_t[]> buffer_;
  std::size_t buffered_ = 0;
  bool failed_ = false;
  Error error_;
};

}  // namespace userperf::perfdata
