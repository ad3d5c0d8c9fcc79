#include "perfdata/writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

#include "perfdata/id_layout.hpp"

namespace userperf::perfdata {

namespace {

constexpr std::size_t kBufferSize = 256 * 1024;
constexpr std::uint32_t kAttrSizeVer0 = 64;

std::uint32_t written_attr_size(const perf_event_attr& attr) {
  return attr.size == 0 ? kAttrSizeVer0 : attr.size;
}

// write(2)/pwrite(2) of all bytes, retrying short writes and EINTR. False with errno set.
bool write_all(int fd, const void* bytes, std::size_t size, off_t offset, bool positional) {
  const auto* p = static_cast<const std::uint8_t*>(bytes);
  while (size > 0) {
    const ssize_t n = positional ? pwrite(fd, p, size, offset) : write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;
      return false;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += n;
  }
  return true;
}

}  // namespace

Expected<std::unique_ptr<Writer>> Writer::create(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(errno, "cannot create " + path + ": " + std::strerror(errno));
  return std::unique_ptr<Writer>(new Writer(fd, path));
}

Writer::Writer(int fd, std::string path)
    : fd_(fd), path_(std::move(path)), buffer_(new std::uint8_t[kBufferSize]) {}

Writer::~Writer() {
  // Unfinished: what is buffered goes out, the header keeps data.size 0 (crash semantics).
  if (fd_ >= 0) {
    if (!failed_) flush();
    close(fd_);
  }
}

bool Writer::fail(int code, const std::string& what) {
  if (!failed_) {
    failed_ = true;
    error_ = make_error(code, path_ + ": " + what);
  }
  return false;
}

bool Writer::fail_errno(const std::string& what) {
  const int code = errno;
  return fail(code, what + ": " + std::strerror(code));
}

int Writer::add_attr(const perf_event_attr& attr, std::span<const std::uint64_t> ids) {
  if (failed_) return -1;
  if (data_started_ || finished_) {
    fail(EBUSY, "attrs must be added before the first record");
    return -1;
  }
  const std::uint32_t size = written_attr_size(attr);
  if (size < kAttrSizeVer0 || size > sizeof(perf_event_attr) || size % 8 != 0) {
    fail(EINVAL, "attr.size " + std::to_string(attr.size) + " is not a perf_event_attr size");
    return -1;
  }
  if (!attrs_.empty()) {
    if (size != attrs_.front().bytes.size()) {
      fail(EINVAL, "attr.size " + std::to_string(size) + " differs from the first attr's " +
                       std::to_string(attrs_.front().bytes.size()));
      return -1;
    }
    if (std::string conflict = id_layout_conflict(first_attr_, attr); !conflict.empty()) {
      fail(EINVAL, conflict);
      return -1;
    }
  } else {
    first_attr_ = attr;
  }
  Attr entry;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(&attr);
  entry.bytes.assign(bytes, bytes + size);
  entry.ids.assign(ids.begin(), ids.end());
  attrs_.push_back(std::move(entry));
  return static_cast<int>(attrs_.size() - 1);
}

bool Writer::add_ids(int index, std::span<const std::uint64_t> ids) {
  if (failed_) return false;
  if (finished_) return fail(EBUSY, "ids added after finish");
  if (index < 0 || static_cast<std::size_t>(index) >= attrs_.size()) return false;
  std::vector<std::uint64_t>& list = attrs_[static_cast<std::size_t>(index)].ids;
  list.insert(list.end(), ids.begin(), ids.end());
  return true;
}

bool Writer::write_bytes(const void* bytes, std::size_t size) {
  if (size == 0) return true;  // an empty ids array has no data pointer
  if (size > kBufferSize - buffered_ && !flush()) return false;
  if (size >= kBufferSize) {
    if (!write_all(fd_, bytes, size, 0, false)) return fail_errno("write");
  } else {
    std::memcpy(buffer_.get() + buffered_, bytes, size);
    buffered_ += size;
  }
  file_pos_ += size;
  return true;
}

bool Writer::flush() {
  if (failed_) return false;
  if (buffered_ == 0) return true;
  const bool ok = write_all(fd_, buffer_.get(), buffered_, 0, false);
  buffered_ = 0;
  return ok || fail_errno("write");
}

bool Writer::checkpoint() {
  if (!data_started_ || finished_) return !failed_;
  if (!flush()) return false;
  if (checkpointed_size_ == data_size_) return true;
  // The header as finish() would write it, less the features: no feature bits, no index.
  FileHeader header = header_;
  header.data.size = data_size_;
  if (!write_all(fd_, &header, sizeof header, 0, true)) return fail_errno("header checkpoint");
  checkpointed_size_ = data_size_;
  return true;
}

bool Writer::begin_data() {
  if (data_started_) return true;
  if (attrs_.empty()) return fail(EINVAL, "a perf.data file needs at least one attr");
  data_started_ = true;
  const std::uint64_t attr_bytes = attrs_.front().bytes.size();
  header_.attr_size = attr_bytes + sizeof(FileSection);
  header_.attrs = {sizeof(FileHeader), header_.attr_size * attrs_.size()};
  std::uint64_t ids_at = header_.attrs.offset + header_.attrs.size;
  std::vector<FileSection> id_sections;
  for (const Attr& a : attrs_) {
    id_sections.push_back({ids_at, a.ids.size() * sizeof(std::uint64_t)});
    ids_at += id_sections.back().size;
  }
  header_.data = {ids_at, 0};
  if (!write_bytes(&header_, sizeof header_)) return false;
  for (std::size_t i = 0; i < attrs_.size(); ++i) {
    if (!write_bytes(attrs_[i].bytes.data(), attrs_[i].bytes.size()) ||
        !write_bytes(&id_sections[i], sizeof(FileSection))) {
      return false;
    }
  }
  for (Attr& a : attrs_) {
    if (!write_bytes(a.ids.data(), a.ids.size() * sizeof(std::uint64_t))) return false;
    a.ids_before_data = a.ids.size();
  }
  return true;
}

bool Writer::write_late_ids() {
  std::vector<std::pair<std::size_t, FileSection>> moved;
  for (std::size_t i = 0; i < attrs_.size(); ++i) {
    const Attr& a = attrs_[i];
    if (a.ids.size() == a.ids_before_data) continue;
    const FileSection section{file_pos_, a.ids.size() * sizeof(std::uint64_t)};
    if (!write_bytes(a.ids.data(), section.size)) return false;
    moved.emplace_back(i, section);
  }
  if (!flush()) return false;
  for (const auto& [i, section] : moved) {
    const std::uint64_t at = header_.attrs.offset + i * header_.attr_size + attrs_[i].bytes.size();
    if (!write_all(fd_, &section, sizeof section, static_cast<off_t>(at), true)) {
      return fail_errno("id section rewrite");
    }
  }
  return true;
}

bool Writer::append(std::span<const std::uint8_t> record) {
  if (failed_) return false;
  if (finished_) return fail(EBUSY, "append after finish");
  perf_event_header header{};
  if (record.size() < sizeof header) {
    return fail(EINVAL, "record of " + std::to_string(record.size()) + " bytes has no header");
  }
  std::memcpy(&header, record.data(), sizeof header);
  if (header.size < sizeof header || header.size % 8 != 0 || header.size != record.size()) {
    return fail(EINVAL, "record type " + std::to_string(header.type) + ": header.size " +
                            std::to_string(header.size) + " for " + std::to_string(record.size()) +
                            " bytes (must be equal, >= 8 and a multiple of 8)");
  }
  if (header.type == 0 || (header.type >= PERF_RECORD_MAX && header.type != kRecordFinishedRound)) {
    return fail(EINVAL, "record type " + std::to_string(header.type) +
                            " is not a kernel record type (perf aborts on it)");
  }
  if (!begin_data() || !write_bytes(record.data(), record.size())) return false;
  data_size_ += record.size();
  return true;
}

bool Writer::append_finished_round() {
  const perf_event_header round{kRecordFinishedRound, 0, sizeof(perf_event_header)};
  return append({reinterpret_cast<const std::uint8_t*>(&round), sizeof round});
}

bool Writer::set_event_name(int index, std::string name) {
  // A wrong index names nothing; unlike an I/O failure it does not spoil the file.
  if (index < 0 || static_cast<std::size_t>(index) >= attrs_.size()) return false;
  attrs_[static_cast<std::size_t>(index)].name = std::move(name);
  return true;
}

bool Writer::finish() {
  if (failed_) return false;
  if (finished_) return fail(EBUSY, "finish called twice");
  if (features_.groups) {
    if (Expected<void> groups = check_groups(*features_.groups, attrs_.size()); !groups) {
      return fail(groups.error().code, groups.error().message);
    }
  }
  // A finished file never says data.size 0, which means unfinished (see the header comment).
  if (data_size_ == 0 && !append_finished_round()) return false;
  if (!flush()) return false;
  const std::uint64_t data_end = file_pos_;

  if (std::any_of(attrs_.begin(), attrs_.end(), [](const Attr& a) { return !a.name.empty(); })) {
    std::vector<EventDesc> events;
    for (const Attr& a : attrs_) events.push_back({a.bytes, a.name, a.ids});
    features_.event_desc = std::move(events);
  }
  const std::vector<FeatureBody> bodies = encode_features(features_);
  std::vector<FileSection> index;
  std::uint64_t body_at = data_end + bodies.size() * sizeof(FileSection);
  for (const FeatureBody& body : bodies) {
    header_.adds_features[body.feature / 64] |= 1ULL << (body.feature % 64);
    index.push_back({body_at, body.bytes.size()});
    body_at += body.bytes.size();
  }
  bool ok = write_bytes(index.data(), index.size() * sizeof(FileSection));
  for (const FeatureBody& body : bodies)
    ok = ok && write_bytes(body.bytes.data(), body.bytes.size());
  ok = ok && write_late_ids();
  if (ok && fdatasync(fd_) != 0) ok = fail_errno("fdatasync");
  header_.data.size = data_size_;
  if (ok && !write_all(fd_, &header_, sizeof header_, 0, true)) ok = fail_errno("header rewrite");
  if (!ok) {
    // No partial feature bytes after the data: the file stays a readable unfinished one.
    if (ftruncate(fd_, static_cast<off_t>(data_end)) != 0) {
      // Nothing more to do: the header still says data.size 0.
    }
    return false;
  }
  finished_ = true;
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) return fail_errno("close");
  return true;
}

}  // namespace userperf::perfdata
