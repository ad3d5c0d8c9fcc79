#include "perfdata/reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cstring>

namespace userperf::perfdata {

namespace {

constexpr std::uint64_t kLegacyMagic = 0x454c494652455050ULL;  // "PERFFILE"
constexpr std::uint64_t kPipeHeaderSize = 16;
constexpr std::uint64_t kHeaderSizeNoFeatures = 72;
constexpr std::uint32_t kAttrSizeVer0 = 64;

// [offset, offset + size) lies inside a file of `file_size` bytes (no wrap-around).
bool inside(const FileSection& s, std::uint64_t file_size) {
  return s.offset <= file_size && s.size <= file_size - s.offset;
}

std::string section_text(const FileSection& s) {
  return "[" + std::to_string(s.offset) + ", +" + std::to_string(s.size) + ")";
}

template <class T>
T load(const std::uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

}  // namespace

Expected<std::unique_ptr<Reader>> Reader::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(errno, "cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return make_error(EINVAL, path + ": not a regular file");
  }
  std::unique_ptr<Reader> reader(new Reader());
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > 0) {
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      const int err = errno;
      close(fd);
      return make_error(err, "cannot map " + path + ": " + std::strerror(err));
    }
    reader->mapping_ = map;
    reader->mapping_size_ = size;
    reader->file_ = {static_cast<const std::uint8_t*>(map), size};
  }
  close(fd);
  if (Expected<void> parsed = reader->parse(); !parsed) {
    Error error = parsed.error();
    error.message = path + ": " + error.message;
    return error;
  }
  return reader;
}

Expected<std::unique_ptr<Reader>> Reader::from_bytes(std::vector<std::uint8_t> bytes) {
  std::unique_ptr<Reader> reader(new Reader());
  reader->owned_ = std::move(bytes);
  reader->file_ = reader->owned_;
  if (Expected<void> parsed = reader->parse(); !parsed) return parsed.error();
  return reader;
}

Reader::~Reader() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_size_);
}

Expected<void> Reader::parse() {
  const std::uint64_t file_size = file_.size();
  if (file_size < kPipeHeaderSize) {
    return malformed_at(0, "file of " + std::to_string(file_size) + " bytes has no header");
  }
  const auto magic = load<std::uint64_t>(file_.data());
  if (magic != kMagic) {
    if (magic == __builtin_bswap64(kMagic)) {
      return malformed_at(0, "perf.data of the other byte order is not supported");
    }
    if (magic == kLegacyMagic) return malformed_at(0, "legacy PERFFILE format is not supported");
    return malformed_at(0, "not a perf.data file (no PERFILE2 magic)");
  }
  const auto header_size = load<std::uint64_t>(file_.data() + 8);
  if (header_size == kPipeHeaderSize) {
    return malformed_at(8, "pipe-mode perf.data is not supported (header size 16)");
  }
  if (header_size != sizeof(FileHeader) && header_size != kHeaderSizeNoFeatures) {
    return malformed_at(8, "header size " + std::to_string(header_size) + " is not 104 or 72");
  }
  if (file_size < header_size) {
    return malformed_at(file_size,
                        "file ends inside the " + std::to_string(header_size) + "-byte header");
  }
  std::memcpy(&header_, file_.data(), header_size);
  if (!inside(header_.data, file_size)) {
    return malformed_at(offsetof(FileHeader, data), "data section " + section_text(header_.data) +
                                                        " runs past the file end " +
                                                        std::to_string(file_size));
  }
  bool any_feature = false;
  for (std::uint64_t word : header_.adds_features) any_feature |= word != 0;
  complete_ = header_.data.size != 0 || any_feature;
  finished_ = any_feature || header_size == kHeaderSizeNoFeatures;
  data_end_ = complete_ ? header_.data.offset + header_.data.size : file_size;
  if (Expected<void> attrs = parse_attrs(); !attrs) return attrs;
  return parse_features();
}

Expected<void> Reader::parse_attrs() {
  const std::uint64_t file_size = file_.size();
  if (header_.attr_size == 0) return malformed_at(offsetof(FileHeader, attr_size), "attr_size 0");
  if (!inside(header_.attrs, file_size)) {
    return malformed_at(offsetof(FileHeader, attrs),
                        "attrs section " + section_text(header_.attrs) + " runs past the file end");
  }
  if (header_.attrs.size == 0) return malformed_at(offsetof(FileHeader, attrs), "no attrs");
  const std::uint64_t end = header_.attrs.offset + header_.attrs.size;
  for (std::uint64_t pos = header_.attrs.offset; pos < end;) {
    if (end - pos < kAttrSizeVer0 + sizeof(FileSection)) {
      return malformed_at(pos, "attrs section ends inside an attr");
    }
    const auto stated = load<std::uint32_t>(file_.data() + pos + offsetof(perf_event_attr, size));
    const std::uint64_t size = stated == 0 ? kAttrSizeVer0 : stated;
    if (size < kAttrSizeVer0 || size % 8 != 0 || size + sizeof(FileSection) != header_.attr_size) {
      return malformed_at(pos + offsetof(perf_event_attr, size),
                          "attr.size " + std::to_string(stated) + " does not match attr_size " +
                              std::to_string(header_.attr_size) + " - 16");
    }
    if (size + sizeof(FileSection) > end - pos) {
      return malformed_at(pos, "attr of " + std::to_string(size) + " bytes runs past the section");
    }
    AttrEntry entry;
    entry.size = static_cast<std::uint32_t>(size);
    entry.offset = pos;
    std::memcpy(&entry.attr, file_.data() + pos, std::min<std::uint64_t>(size, sizeof entry.attr));
    // A newer ABI's attr is usable when its extra fields are zero (the kernel's rule).
    for (std::uint64_t i = sizeof entry.attr; i < size; ++i) {
      if (file_[pos + i] != 0) {
        return malformed_at(pos + i, "attr of size " + std::to_string(size) +
                                         " sets fields newer than " +
                                         std::to_string(sizeof entry.attr) + " bytes");
      }
    }
    const std::uint64_t ids_at = pos + size;
    const auto ids = load<FileSection>(file_.data() + ids_at);
    if (!inside(ids, file_size) || ids.size % sizeof(std::uint64_t) != 0) {
      return malformed_at(ids_at, "ids section " + section_text(ids) +
                                      " is outside the file or not a multiple of 8");
    }
    entry.ids.resize(ids.size / sizeof(std::uint64_t));
    if (ids.size != 0) std::memcpy(entry.ids.data(), file_.data() + ids.offset, ids.size);
    const int index = static_cast<int>(attrs_.size());
    for (std::uint64_t id : entry.ids) {
      auto [it, fresh] = attr_by_id_.emplace(id, index);
      if (!fresh && it->second != index) {
        return malformed_at(ids.offset, "id " + std::to_string(id) + " listed under attrs " +
                                            std::to_string(it->second) + " and " +
                                            std::to_string(index));
      }
    }
    if (!attrs_.empty()) {
      if (std::string conflict = id_layout_conflict(attrs_.front().attr, entry.attr);
          !conflict.empty()) {
        return malformed_at(pos, conflict);
      }
    }
    attrs_.push_back(std::move(entry));
    pos += size + sizeof(FileSection);
  }
  id_layout_ = IdLayout::of(attrs_.front().attr);
  return {};
}

Expected<void> Reader::parse_features() {
  if (header_.size != sizeof(FileHeader)) return {};
  const std::uint64_t file_size = file_.size();
  std::uint64_t index_at = header_.data.offset + header_.data.size;
  for (int feature = 0; feature < kFeatureBits; ++feature) {
    if ((header_.adds_features[feature / 64] >> (feature % 64) & 1) == 0) continue;
    if (sizeof(FileSection) > file_size - index_at) {
      return malformed_at(index_at, std::string("feature index entry of ") +
                                        (feature_name(feature) ? feature_name(feature) : "?") +
                                        " (bit " + std::to_string(feature) +
                                        ") runs past the file end");
    }
    const auto section = load<FileSection>(file_.data() + index_at);
    if (!inside(section, file_size)) {
      return malformed_at(index_at, "feature bit " + std::to_string(feature) + " section " +
                                        section_text(section) + " runs past the file end");
    }
    sections_.push_back({feature, section});
    if (Expected<void> decoded = decode_feature(
            feature, file_.subspan(section.offset, section.size), section.offset, features_);
        !decoded) {
      return decoded;
    }
    index_at += sizeof(FileSection);
  }
  if (!features_.groups) return {};
  if (Expected<void> groups = check_groups(*features_.groups, attrs_.size()); !groups) {
    std::uint64_t body_at = 0;
    for (const FeatureSection& s : sections_) {
      if (s.feature == kFeatGroupDesc) body_at = s.section.offset;
    }
    return malformed_at(body_at, "GROUP_DESC: " + groups.error().message);
  }
  return {};
}

std::string Reader::unfinished_note(std::uint64_t torn_tail) const {
  if (finished_) return "";
  const std::uint64_t file_size = file_.size();
  std::string note = "file is incomplete (no header features: its writer stopped before the end): ";
  if (!complete_) {
    note += "data.size 0, records read to the end of the file";
    if (torn_tail != 0) {
      note += "; its last " + std::to_string(torn_tail) + " bytes are a torn record, not read";
    }
    return note;
  }
  note += "records read up to the header's data size, " + std::to_string(header_.data.size) +
          " bytes, ending at offset " + std::to_string(data_end_);
  if (file_size > data_end_) {
    note += "; the " + std::to_string(file_size - data_end_) + " bytes after it are not read";
  }
  return note;
}

int Reader::attr_index_of_id(std::uint64_t id) const {
  auto it = attr_by_id_.find(id);
  return it == attr_by_id_.end() ? -1 : it->second;
}

int Reader::attr_index(const RecordView& record) const {
  if (attrs_.size() == 1) return record.header.type < PERF_RECORD_MAX ? 0 : -1;
  const std::optional<std::uint64_t> id = record_id(record.bytes, id_layout_);
  return id ? attr_index_of_id(*id) : -1;
}

RecordCursor::RecordCursor(const Reader& reader) : reader_(reader), pos_(reader.data_begin()) {}

RecordCursor::Next RecordCursor::fail(std::uint64_t offset, const std::string& what) {
  error_ = malformed_at(offset, what);
  failed_ = true;
  pos_ = reader_.data_end();
  return Next::kError;
}

RecordCursor::Next RecordCursor::next(RecordView& out) {
  if (failed_) return Next::kError;
  const std::uint64_t end = reader_.data_end();
  const std::span<const std::uint8_t> file = reader_.file();
  if (pos_ >= end) return Next::kEnd;
  const std::uint64_t left = end - pos_;
  // An unfinished file may end inside its last record: that is where the writer stopped.
  auto torn = [&](const std::string& what) {
    if (reader_.complete()) return fail(pos_, what);
    tail_ = left;
    pos_ = end;
    return Next::kEnd;
  };
  if (left < sizeof(perf_event_header)) return torn("data ends inside a record header");
  perf_event_header header;
  std::memcpy(&header, file.data() + pos_, sizeof header);
  if (header.size < sizeof header || header.size % 8 != 0) {
    if (header.size == 0 && !reader_.complete()) return torn("zero record header");
    return fail(pos_, "record type " + std::to_string(header.type) + " has size " +
                          std::to_string(header.size) + " (not >= 8 and a multiple of 8)");
  }
  if (header.size > left) {
    return torn("record type " + std::to_string(header.type) + " of " +
                std::to_string(header.size) + " bytes runs past the data end " +
                std::to_string(end));
  }
  std::uint64_t payload = 0;
  if (header.type == kRecordAuxtrace || header.type == kRecordHeaderTracingData) {
    if (header.size < 16) {
      return fail(pos_,
                  "record type " + std::to_string(header.type) + " too small for its size field");
    }
    payload = header.type == kRecordAuxtrace
                  ? load<std::uint64_t>(file.data() + pos_ + 8)
                  : (std::uint64_t{load<std::uint32_t>(file.data() + pos_ + 8)} + 7) / 8 * 8;
    if (payload > left - header.size) {
      return torn("payload of " + std::to_string(payload) + " bytes after record type " +
                  std::to_string(header.type) + " runs past the data end");
    }
  }
  out.header = header;
  out.offset = pos_;
  out.bytes = file.subspan(pos_, header.size);
  out.payload = file.subspan(pos_ + header.size, payload);
  pos_ += header.size + payload;
  return Next::kRecord;
}

}  // namespace userperf::perfdata
