#include "perfdata/features.hpp"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "perfdata/format.hpp"
#include "perfdata/malformed.hpp"
#include "perfdata/perf_string.hpp"
#include "support/byte_reader.hpp"
#include "support/byte_writer.hpp"

namespace userperf::perfdata {

namespace {

std::vector<std::uint8_t> string_body(const std::string& text) {
  std::vector<std::uint8_t> out;
  support::ByteWriter w(out);
  write_perf_string(w, text);
  return out;
}

// perf_record_header_build_id: header, pid, build_id[24] (20 data bytes, size, 3 reserved), then
// the NUL-terminated file name padded to kStringAlign (perf 6.1's NAME_ALIGN is 64 too).
constexpr std::size_t kBuildIdHeaderSize = sizeof(perf_event_header) + 4 + 24;
constexpr std::size_t kBuildIdMax = 20;
constexpr std::uint16_t kMiscBuildIdSize = 1 << 15;  // PERF_RECORD_MISC_BUILD_ID_SIZE

void put_build_id(support::ByteWriter& out, const BuildIdEntry& entry) {
  const std::size_t name_len =
      (entry.filename.size() + 1 + kStringAlign - 1) / kStringAlign * kStringAlign;
  const std::size_t id_size = std::min(entry.id.size(), kBuildIdMax);
  const perf_event_header header{0, static_cast<std::uint16_t>(entry.misc | kMiscBuildIdSize),
                                 static_cast<std::uint16_t>(kBuildIdHeaderSize + name_len)};
  std::uint8_t id[24] = {};
  std::memcpy(id, entry.id.data(), id_size);
  id[kBuildIdMax] = static_cast<std::uint8_t>(id_size);
  out.put(header);
  out.put(entry.pid);
  out.put(id);
  out.put_bytes(entry.filename.data(), entry.filename.size());
  out.put_zeros(name_len - entry.filename.size());
}

Error body_error(int feature, std::uint64_t offset, const char* what) {
  return malformed_at(offset, std::string("feature ") + feature_name(feature) + ": " + what);
}

// perf's counted lists (CMDLINE, PMU_MAPPINGS, GROUP_DESC): a u32 count, then the entries.
template <class T, class WriteEntry>
void write_list(std::vector<FeatureBody>& out, int feature,
                const std::optional<std::vector<T>>& list, WriteEntry&& write_entry) {
  if (!list) return;
  FeatureBody body{feature, {}};
  support::ByteWriter w(body.bytes);
  w.put(static_cast<std::uint32_t>(list->size()));
  for (const T& entry : *list) write_entry(w, entry);
  out.push_back(std::move(body));
}

// Each entry is read by `read_entry` and is at least `min_entry` bytes long, so that a corrupt
// count cannot make a huge allocation.
template <class T, class ReadEntry>
Expected<void> read_list(support::ByteReader& in, int feature, std::size_t min_entry,
                         const char* count_error, std::optional<std::vector<T>>& out,
                         ReadEntry&& read_entry) {
  std::uint32_t count = 0;
  if (!in.read(count)) return body_error(feature, in.failed_at(), "truncated body");
  if (!in.fits(count, min_entry)) return body_error(feature, in.offset() - 4, count_error);
  std::vector<T> entries(count);
  for (T& entry : entries) {
    if (!read_entry(entry)) break;
  }
  if (!in.ok()) return body_error(feature, in.failed_at(), "truncated body");
  out = std::move(entries);
  return {};
}

}  // namespace

const char* feature_name(int feature) {
  static constexpr const char* kNames[] = {
      "RESERVED",        "TRACING_DATA", "BUILD_ID",     "HOSTNAME",     "OSRELEASE",
      "VERSION",         "ARCH",         "NRCPUS",       "CPUDESC",      "CPUID",
      "TOTAL_MEM",       "CMDLINE",      "EVENT_DESC",   "CPU_TOPOLOGY", "NUMA_TOPOLOGY",
      "BRANCH_STACK",    "PMU_MAPPINGS", "GROUP_DESC",   "AUXTRACE",     "STAT",
      "CACHE",           "SAMPLE_TIME",  "MEM_TOPOLOGY", "CLOCKID",      "DIR_FORMAT",
      "BPF_PROG_INFO",   "BPF_BTF",      "COMPRESSED",   "CPU_PMU_CAPS", "CLOCK_DATA",
      "HYBRID_TOPOLOGY", "PMU_CAPS"};
  if (feature < 0 || feature >= static_cast<int>(std::size(kNames))) return nullptr;
  return kNames[feature];
}

Features Features::of_this_host() {
  Features f;
  utsname uts{};
  if (uname(&uts) == 0) {
    f.hostname = uts.nodename;
    f.osrelease = uts.release;
    f.arch = uts.machine;
  }
  const long configured = sysconf(_SC_NPROCESSORS_CONF);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  f.nrcpus = NrCpus{static_cast<std::uint32_t>(configured > 0 ? configured : 1),
                    static_cast<std::uint32_t>(online > 0 ? online : 1)};
  f.version = "userperf 0.1.0";
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t pos = 0; pos < all.size();) {
    const std::size_t end = all.find('\0', pos);
    args.push_back(all.substr(pos, end - pos));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  f.cmdline = std::move(args);
  return f;
}

std::vector<std::uint8_t> read_build_id(const std::string& path) {
  std::vector<std::uint8_t> id;
  if (elf_version(EV_CURRENT) == EV_NONE) return id;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return id;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  for (Elf_Scn* scn = elf != nullptr && elf_kind(elf) == ELF_K_ELF ? elf_nextscn(elf, nullptr)
                                                                   : nullptr;
       scn != nullptr && id.empty(); scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) continue;
    GElf_Nhdr note;
    std::size_t name_at = 0, desc_at = 0;
    for (std::size_t at = 0; (at = gelf_getnote(data, at, &note, &name_at, &desc_at)) > 0;) {
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(static_cast<const char*>(data->d_buf) + name_at, "GNU", 4) == 0) {
        const auto* desc = static_cast<const std::uint8_t*>(data->d_buf) + desc_at;
        id.assign(desc, desc + std::min<std::size_t>(note.n_descsz, kBuildIdMax));
        break;
      }
    }
  }
  if (elf != nullptr) elf_end(elf);
  close(fd);
  return id;
}

const std::string* Features::pmu_name(std::uint32_t type) const {
  if (!pmu_mappings) return nullptr;
  for (const PmuMapping& m : *pmu_mappings) {
    if (m.type == type) return &m.name;
  }
  return nullptr;
}

const GroupDesc* Features::group_of(std::uint32_t index) const {
  if (!groups) return nullptr;
  for (const GroupDesc& g : *groups) {
    if (index >= g.leader && index - g.leader < g.members) return &g;
  }
  return nullptr;
}

std::vector<FeatureBody> encode_features(const Features& f) {
  std::vector<FeatureBody> out;
  auto add_string = [&](int feature, const std::optional<std::string>& value) {
    if (value) out.push_back({feature, string_body(*value)});
  };
  if (f.tracing_data) out.push_back({kFeatTracingData, *f.tracing_data});
  if (f.build_ids) {
    FeatureBody body{kFeatBuildId, {}};
    support::ByteWriter w(body.bytes);
    for (const BuildIdEntry& entry : *f.build_ids) put_build_id(w, entry);
    out.push_back(std::move(body));
  }
  add_string(kFeatHostname, f.hostname);
  add_string(kFeatOsRelease, f.osrelease);
  add_string(kFeatVersion, f.version);
  add_string(kFeatArch, f.arch);
  if (f.nrcpus) {
    FeatureBody body{kFeatNrCpus, {}};
    support::ByteWriter w(body.bytes);
    w.put<std::uint32_t>(f.nrcpus->available);
    w.put<std::uint32_t>(f.nrcpus->online);
    out.push_back(std::move(body));
  }
  write_list(out, kFeatCmdline, f.cmdline,
             [](support::ByteWriter& w, const std::string& arg) { write_perf_string(w, arg); });
  write_list(out, kFeatPmuMappings, f.pmu_mappings,
             [](support::ByteWriter& w, const PmuMapping& m) {
               w.put<std::uint32_t>(m.type);
               write_perf_string(w, m.name);
             });
  if (f.event_desc && !f.event_desc->empty()) {
    // perf's write_event_desc: u32 nr, u32 attr size, then per event the attr, u32 nr_ids, the
    // name, u64 ids[nr_ids].
    FeatureBody body{kFeatEventDesc, {}};
    support::ByteWriter w(body.bytes);
    w.put(static_cast<std::uint32_t>(f.event_desc->size()));
    w.put(static_cast<std::uint32_t>(f.event_desc->front().attr.size()));
    for (const EventDesc& e : *f.event_desc) {
      w.put_bytes(e.attr.data(), e.attr.size());
      w.put(static_cast<std::uint32_t>(e.ids.size()));
      write_perf_string(w, e.name);
      w.put_bytes(e.ids.data(), e.ids.size() * sizeof(std::uint64_t));
    }
    out.push_back(std::move(body));
  }
  write_list(out, kFeatGroupDesc, f.groups, [](support::ByteWriter& w, const GroupDesc& g) {
    write_perf_string(w, g.name);
    w.put<std::uint32_t>(g.leader);
    w.put<std::uint32_t>(g.members);
  });
  // The index lists features by ascending bit, and a reader pairs the k-th entry with the k-th
  // set bit.
  std::sort(out.begin(), out.end(),
            [](const FeatureBody& a, const FeatureBody& b) { return a.feature < b.feature; });
  return out;
}

Expected<void> decode_feature(int feature, std::span<const std::uint8_t> body, std::uint64_t offset,
                              Features& out) {
  support::ByteReader in(body, offset);
  std::uint32_t count = 0;
  switch (feature) {
    case kFeatHostname:
    case kFeatOsRelease:
    case kFeatVersion:
    case kFeatArch: {
      std::string text;
      if (!read_perf_string(in, text)) break;
      (feature == kFeatHostname    ? out.hostname
       : feature == kFeatOsRelease ? out.osrelease
       : feature == kFeatVersion   ? out.version
                                   : out.arch) = std::move(text);
      return {};
    }
    case kFeatNrCpus: {
      NrCpus cpus;
      if (!in.read(cpus.available) || !in.read(cpus.online)) break;
      out.nrcpus = cpus;
      return {};
    }
    case kFeatCmdline:
      return read_list(in, feature, sizeof(std::uint32_t), "string count exceeds the body",
                       out.cmdline, [&](std::string& arg) { return read_perf_string(in, arg); });
    case kFeatPmuMappings:
      return read_list(
          in, feature, 2 * sizeof(std::uint32_t), "PMU count exceeds the body", out.pmu_mappings,
          [&](PmuMapping& m) { return in.read(m.type) && read_perf_string(in, m.name); });
    case kFeatEventDesc: {
      std::uint32_t attr_size = 0;
      if (!in.read(count) || !in.read(attr_size)) break;
      if (attr_size < PERF_ATTR_SIZE_VER0 || attr_size > 4096) {
        return body_error(feature, in.offset() - 4, "bad attr size");
      }
      if (!in.fits(count, attr_size + 2 * sizeof(std::uint32_t))) {
        return body_error(feature, in.offset() - 8, "event count exceeds the body");
      }
      std::vector<EventDesc> events(count);
      for (EventDesc& e : events) {
        std::uint32_t nr_ids = 0;
        std::span<const std::uint8_t> attr;
        if (!in.bytes(attr_size, attr)) break;
        e.attr.assign(attr.begin(), attr.end());
        if (!in.read(nr_ids) || !read_perf_string(in, e.name)) break;
        if (!in.fits(nr_ids, sizeof(std::uint64_t))) {
          return body_error(feature, in.offset(), "id count exceeds the body");
        }
        e.ids.resize(nr_ids);
        for (std::uint64_t& id : e.ids) in.read(id);
      }
      if (!in.ok()) break;
      out.event_desc = std::move(events);
      return {};
    }
    case kFeatGroupDesc:
      return read_list(in, feature, 3 * sizeof(std::uint32_t), "group count exceeds the body",
                       out.groups, [&](GroupDesc& g) {
                         return read_perf_string(in, g.name) && in.read(g.leader) &&
                                in.read(g.members);
                       });
    case kFeatTracingData:
      out.tracing_data = std::vector<std::uint8_t>(body.begin(), body.end());
      return {};
    case kFeatBuildId: {
      std::vector<BuildIdEntry> entries;
      while (in.ok() && in.remaining() > 0) {
        const std::uint64_t at = in.offset();
        perf_event_header header{};
        BuildIdEntry entry;
        std::uint8_t id[24] = {};
        if (!in.read(header) || !in.read(entry.pid) || !in.read(id)) break;
        if (header.size < kBuildIdHeaderSize || header.size - kBuildIdHeaderSize > in.remaining()) {
          return body_error(feature, at, "build id entry size exceeds the body");
        }
        entry.misc = static_cast<std::uint16_t>(header.misc & ~kMiscBuildIdSize);
        const std::size_t id_size = (header.misc & kMiscBuildIdSize)
                                        ? std::min<std::size_t>(id[kBuildIdMax], kBuildIdMax)
                                        : kBuildIdMax;
        entry.id.assign(id, id + id_size);
        const std::size_t name_len = header.size - kBuildIdHeaderSize;
        std::span<const std::uint8_t> name_bytes;
        in.bytes(name_len, name_bytes);
        const char* name = reinterpret_cast<const char*>(name_bytes.data());
        entry.filename.assign(name, strnlen(name, name_bytes.size()));
        entries.push_back(std::move(entry));
      }
      if (!in.ok()) break;
      out.build_ids = std::move(entries);
      return {};
    }
    default:
      return {};
  }
  return body_error(feature, in.failed_at(), "truncated body");
}

Expected<void> check_groups(const std::vector<GroupDesc>& groups, std::size_t nr_attrs) {
  std::uint64_t next_free = 0;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const GroupDesc& g = groups[i];
    const char* problem = nullptr;
    if (g.members == 0) {
      problem = "has no members";
    } else if (g.leader < next_free) {
      problem = "overlaps or precedes the previous group";
    } else if (std::uint64_t{g.leader} + g.members > nr_attrs) {
      problem = "runs past the last attr";
    }
    if (problem != nullptr) {
      return make_error(EINVAL, "group " + std::to_string(i) + " (leader " +
                                    std::to_string(g.leader) + ", " + std::to_string(g.members) +
                                    " members) " + problem + " (" + std::to_string(nr_attrs) +
                                    " attrs)");
    }
    next_free = std::uint64_t{g.leader} + g.members;
  }
  return {};
}

}  // namespace userperf::perfdata
