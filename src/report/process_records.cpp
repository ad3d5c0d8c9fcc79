#include "report/process_records.hpp"

#include <sys/mman.h>

#include "report/address_space.hpp"
#include "support/byte_reader.hpp"

namespace userperf::report {

namespace {

support::ByteReader body(const perfdata::RecordView& record) {
  return support::ByteReader(record.bytes.subspan(sizeof(perf_event_header)),
                             record.offset + sizeof(perf_event_header));
}

}  // namespace

bool decode_mmap(const perfdata::RecordView& record, MmapRecord& out) {
  support::ByteReader in = body(record);
  in.read(out.pid) && in.read(out.tid) && in.read(out.start) && in.read(out.len) &&
      in.read(out.pgoff);
  // An MMAP record maps code unless it says data (perf record -d), as perf reads it.
  out.prot = record.header.misc & PERF_RECORD_MISC_MMAP_DATA ? PROT_READ : PROT_READ | PROT_EXEC;
  if (record.header.type == PERF_RECORD_MMAP2) {
    // maj, min, ino, ino_generation (or a build id), then prot and flags.
    std::uint32_t flags = 0;
    in.skip(24) && in.read(out.prot) && in.read(flags);
  }
  in.c_string(out.path);
  return in.ok();
}

bool decode_comm(const perfdata::RecordView& record, CommRecord& out) {
  support::ByteReader in = body(record);
  out.exec = record.header.misc & PERF_RECORD_MISC_COMM_EXEC;
  return in.read(out.pid) && in.read(out.tid) && in.c_string(out.comm);
}

bool decode_task(const perfdata::RecordView& record, TaskRecord& out) {
  support::ByteReader in = body(record);
  return in.read(out.pid) && in.read(out.ppid) && in.read(out.tid) && in.read(out.ptid);
}

bool is_process_record(std::uint32_t type) {
  return type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 || type == PERF_RECORD_COMM ||
         type == PERF_RECORD_FORK;
}

bool replay_process_record(ProcessTable& processes, const perfdata::RecordView& record) {
  switch (record.header.type) {
    case PERF_RECORD_MMAP:
    case PERF_RECORD_MMAP2: {
      MmapRecord mmap;
      if (!decode_mmap(record, mmap)) return false;
      // AddressSpace::map ignores an empty range and one that wraps: nothing can hit it.
      processes.on_mmap(mmap.pid, {mmap.start, mmap.start + mmap.len, mmap.pgoff, mmap.path},
                        mmap.prot);
      return true;
    }
    case PERF_RECORD_COMM: {
      CommRecord comm;
      if (!decode_comm(record, comm)) return false;
      processes.on_comm(comm.pid, comm.tid, comm.comm, comm.exec);
      return true;
    }
    case PERF_RECORD_FORK: {
      TaskRecord task;
      if (!decode_task(record, task)) return false;
      processes.on_fork(task.pid, task.ppid, task.tid, task.ptid);
      return true;
    }
    default:
      return true;
  }
}

}  // namespace userperf::report
