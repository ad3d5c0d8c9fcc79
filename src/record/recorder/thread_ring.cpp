#include "record/recorder/thread_ring.hpp"

#include <sys/mman.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "ring/ring_memory.hpp"

namespace userperf::record {

Expected<std::unique_ptr<ThreadRing>> ThreadRing::map(int memfd, pid_t pid, pid_t tid,
                                                      std::vector<RingEvent> events) {
  // The program holds the memfd too: unless its size is sealed it could shrink it under the
  // mapping, and the next drain would die of SIGBUS with the whole recording. The seal first,
  // then the size: sealed, the size cannot change between the two.
  if (!ring::ring_memfd_size_sealed(memfd)) {
    return make_error(EPERM, "a ring memfd whose size is not sealed (F_SEAL_SHRINK) is not mapped");
  }
  struct stat st {};
  if (fstat(memfd, &st) != 0) {
    const int err = errno;
    return make_error(err, std::string("fstat of a ring: ") + std::strerror(err));
  }
  const long page = sysconf(_SC_PAGESIZE);
  if (st.st_size < 2 * page || st.st_size % page != 0) {
    return make_error(EINVAL, "a ring memfd of " + std::to_string(st.st_size) +
                                  " bytes is no control page + data");
  }
  const auto length = static_cast<std::size_t>(st.st_size);
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    return make_error(err, std::string("mmap of a ring: ") + std::strerror(err));
  }
  ring::RingView view;
  if (const ring::ReadStatus s = ring::make_ring_view(base, length, view);
      s != ring::ReadStatus::kOk) {
    munmap(base, length);
    return make_error(EINVAL, std::string("a ring's control page: ") + ring::to_string(s));
  }
  return std::unique_ptr<ThreadRing>(
      new ThreadRing(base, length, view, pid, tid, std::move(events)));
}

ThreadRing::ThreadRing(void* base, std::size_t length, const ring::RingView& view, pid_t pid,
                       pid_t tid, std::vector<RingEvent> events)
    : base_(base),
      length_(length),
      reader_(view),
      pid_(pid),
      tid_(tid),
      tail_(std::atomic_ref<__u64>(view.control->data_tail).load(std::memory_order_relaxed)) {
  for (const RingEvent& e : events) {
    events_.push_back(
        {e.id, e.attr.sample_type, e.config_index, abi::SampleFormat::from_attr(e.attr)});
  }
}

ThreadRing::~ThreadRing() {
  munmap(base_, length_);
}

const ThreadRing::CheckedEvent* ThreadRing::event_of(std::uint64_t id) const {
  for (const CheckedEvent& e : events_) {
    if (e.id == id) return &e;
  }
  return nullptr;
}

Expected<void> ThreadRing::check_copy() {
  perf_event_header header{};
  std::memcpy(&header, copy_.data(), sizeof header);
  if (header.size != copy_.size())
    return make_error(EBADMSG, "a record's size changed while it was read");
  if (header.type == 0 || header.type >= PERF_RECORD_MAX) {
    return make_error(EBADMSG,
                      "record type " + std::to_string(header.type) + " is no kernel record type");
  }
  // PERF_SAMPLE_IDENTIFIER: the first word of a SAMPLE, the last of any other record's trailer.
  if (copy_.size() < sizeof header + sizeof(std::uint64_t))
    return make_error(EBADMSG, "a record without its id");
  std::uint64_t id = 0;
  const std::size_t id_at =
      header.type == PERF_RECORD_SAMPLE ? sizeof header : copy_.size() - sizeof id;
  std::memcpy(&id, copy_.data() + id_at, sizeof id);
  const CheckedEvent* event = event_of(id);
  if (event == nullptr)
    return make_error(EBADMSG, "a record of id " + std::to_string(id) + ", no event of this ring");
  checked_ = event;
  if (header.type != PERF_RECORD_SAMPLE) {
    const abi::ParseStatus status = abi::parse_sample_id(copy_, event->sample_type, trailer_);
    if (!status.ok())
      return make_error(EBADMSG,
                        std::string("a record's sample_id: ") + abi::to_string(status.error));
    return {};
  }
  const abi::ParseStatus status = abi::parse_sample(copy_, event->format, parsed_);
  if (!status.ok()) {
    return make_error(EBADMSG, std::string("a sample: ") + abi::to_string(status.error) +
                                   " at byte " + std::to_string(status.offset));
  }
  return {};
}

Expected<void> ThreadRing::drain(perfdata::Writer& writer, DrainCounts& counts) {
  if (broken_) return {};
  std::string bad;
  const std::uint64_t tail =
      std::atomic_ref<__u64>(static_cast<perf_event_mmap_page*>(base_)->data_tail)
          .load(std::memory_order_relaxed);
  ring::ReadStatus status = ring::ReadStatus::kEmpty;
  if (tail != tail_) {
    bad = "data_tail " + std::to_string(tail) + " is not where the recorder left it, " +
          std::to_string(tail_);
  } else {
    status = ring::drain(reader_, [&](const ring::Record& r) {
      copy_.assign(r.bytes.begin(), r.bytes.end());
      if (const Expected<void> checked = check_copy(); !checked) {
        bad = checked.error().message;
        return false;
      }
      if (!writer.append(copy_)) return false;
      ++counts.records;
      if (r.header.type == PERF_RECORD_SAMPLE) {
        ++counts.samples;
        if (checked_->config_index < kMaxThreadEvents) {
          ++counts.samples_of[checked_->config_index];
          counts.period_of[checked_->config_index] += parsed_.period;
        }
      }
      // Counted from the checked copy: a LOST record the check refused counts nothing.
      if (r.header.type == PERF_RECORD_LOST && copy_.size() >= 24) {
        std::uint64_t lost = 0;
        std::memcpy(&lost, copy_.data() + 16, sizeof lost);
        counts.lost += lost;
      }
      if (r.header.type == PERF_RECORD_LOST_SAMPLES && copy_.size() >= 16) {
        std::uint64_t lost = 0;
        std::memcpy(&lost, copy_.data() + 8, sizeof lost);
        counts.lost_samples += lost;
      }
      return true;
    });
    if (status == ring::ReadStatus::kEmpty) tail_ = reader_.position();  // drain() committed it
  }
  if (writer.failed()) return writer.error();
  if (bad.empty() && status != ring::ReadStatus::kEmpty) bad = ring::to_string(status);
  if (!bad.empty()) {
    broken_ = true;
    return make_error(EBADMSG, "the ring of thread " + std::to_string(tid_) + " (process " +
                                   std::to_string(pid_) + ") is corrupt (" + bad +
                                   "); it is no longer read");
  }
  return {};
}

}  // namespace userperf::record
