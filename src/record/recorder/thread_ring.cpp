#include "record/recorder/thread_ring.hpp"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "ring/ring_memory.hpp"

namespace userperf::record {

std::unique_ptr<ThreadRing> ThreadRing::map(int memfd, pid_t pid, pid_t tid, std::string& error) {
  struct stat st {};
  if (fstat(memfd, &st) != 0) {
    error = std::string("fstat of a ring: ") + std::strerror(errno);
    return nullptr;
  }
  const long page = sysconf(_SC_PAGESIZE);
  if (st.st_size < 2 * page || st.st_size % page != 0) {
    error = "a ring memfd of " + std::to_string(st.st_size) + " bytes is no control page + data";
    return nullptr;
  }
  // The program holds the memfd too: unless its size is sealed it could shrink it under the
  // mapping, and the next drain would die of SIGBUS with the whole recording.
  if (!ring::ring_memfd_size_sealed(memfd)) {
    error = "a ring memfd whose size is not sealed (F_SEAL_SHRINK) is not mapped";
    return nullptr;
  }
  const auto length = static_cast<std::size_t>(st.st_size);
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  if (base == MAP_FAILED) {
    error = std::string("mmap of a ring: ") + std::strerror(errno);
    return nullptr;
  }
  ring::RingView view;
  if (const ring::ReadStatus s = ring::make_ring_view(base, length, view);
      s != ring::ReadStatus::kOk) {
    munmap(base, length);
    error = std::string("a ring's control page: ") + ring::to_string(s);
    return nullptr;
  }
  return std::unique_ptr<ThreadRing>(new ThreadRing(base, length, view, pid, tid));
}

ThreadRing::ThreadRing(void* base, std::size_t length, const ring::RingView& view, pid_t pid,
                       pid_t tid)
    : base_(base), length_(length), reader_(view), pid_(pid), tid_(tid) {}

ThreadRing::~ThreadRing() {
  munmap(base_, length_);
}

bool ThreadRing::drain(perfdata::Writer& writer, DrainCounts& counts, std::string& error) {
  error.clear();
  if (broken_) return true;
  const std::uint64_t lost_before = reader_.lost();
  ring::ReadStatus status = reader_.begin();
  ring::Record r;
  bool written = true;
  while (status == ring::ReadStatus::kOk && (status = reader_.next(r)) == ring::ReadStatus::kOk) {
    if (!writer.append(r.bytes)) {
      written = false;
      break;
    }
    ++counts.records;
    if (r.header.type == PERF_RECORD_SAMPLE) ++counts.samples;
  }
  counts.lost += reader_.lost() - lost_before;
  if (!written) return false;
  if (status != ring::ReadStatus::kEmpty) {
    broken_ = true;
    error = "the ring of thread " + std::to_string(tid_) + " (process " + std::to_string(pid_) +
            ") is corrupt (" + ring::to_string(status) + "); it is no longer read";
    return false;
  }
  reader_.commit();
  return true;
}

}  // namespace userperf::record
