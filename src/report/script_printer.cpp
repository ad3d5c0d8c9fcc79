#include "report/script_printer.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "abi/sample_parser.hpp"
#include "perfdata/malformed.hpp"
#include "perfdata/record_names.hpp"
#include "support/byte_reader.hpp"
#include "support/hex.hpp"
#include "trace/aux_decoder.hpp"

namespace userperf::report {

namespace {

using perfdata::Features;
using perfdata::GroupDesc;
using perfdata::known_record_type_name;
using perfdata::malformed_at;
using perfdata::Reader;
using perfdata::record_type_name;
using perfdata::RecordCursor;
using perfdata::RecordView;

constexpr std::size_t kHexDumpBytes = 64;

using support::hex;

// The event's name: its PMU (PMU_MAPPINGS, else the fixed kernel types) and config.
std::string event_name(const perf_event_attr& attr, const Features& features) {
  if (attr.type == PERF_TYPE_SOFTWARE) {
    static constexpr const char* kSoftware[] = {
        "cpu-clock",        "task-clock",   "page-faults",  "context-switches",
        "cpu-migrations",   "minor-faults", "major-faults", "alignment-faults",
        "emulation-faults", "dummy",        "bpf-output"};
    if (attr.config < std::size(kSoftware)) return kSoftware[attr.config];
  }
  if (attr.type == PERF_TYPE_HARDWARE) {
    static constexpr const char* kHardware[] = {"cycles",       "instructions", "cache-references",
                                                "cache-misses", "branches",     "branch-misses",
                                                "bus-cycles"};
    if (attr.config < std::size(kHardware)) return kHardware[attr.config];
  }
  if (const std::string* pmu = features.pmu_name(attr.type)) {
    return attr.config == 0 ? *pmu + "//" : *pmu + "/config=" + hex(attr.config) + "/";
  }
  return "type" + std::to_string(attr.type) + "/config=" + hex(attr.config) + "/";
}

struct SymbolizeContext {
  ProcessSymbols* symbols;
  std::uint32_t pid;
};

std::string symbolize_for_decoder(std::uint64_t address, void* context) {
  auto* c = static_cast<SymbolizeContext*>(context);
  return c->symbols->describe(c->pid, address);
}

class Printer {
 public:
  Printer(const Reader& reader, std::FILE* out, const ScriptOptions& options)
      : reader_(reader), out_(out), options_(options) {}

  Expected<void> run() {
    RecordCursor cursor = reader_.records();
    RecordView record;
    RecordCursor::Next next;
    while ((next = cursor.next(record)) == RecordCursor::Next::kRecord) {
      if (options_.symbols != nullptr) options_.symbols->observe(record);
      if (Expected<void> printed = print(record); !printed) return printed;
    }
    if (next == RecordCursor::Next::kError) return cursor.error();
    if (const std::string note = reader_.unfinished_note(cursor.truncated_tail()); !note.empty()) {
      std::fprintf(out_, "# %s\n", note.c_str());
      if (options_.on_note) options_.on_note(note);
    }
    return {};
  }

 private:
  std::string address(std::uint32_t pid, std::uint64_t ip) {
    std::string text = hex(ip);
    if (options_.symbols == nullptr) return text;
    const std::string where = options_.symbols->describe(pid, ip);
    return where.empty() ? text : text + " " + where;
  }

  Expected<void> print(const RecordView& record) {
    const std::uint32_t type = record.header.type;
    const int attr_index = reader_.attr_index(record);
    std::string time = "-";
    if (type != PERF_RECORD_SAMPLE && attr_index >= 0 && type < PERF_RECORD_MAX) {
      const perf_event_attr& attr = reader_.attrs()[attr_index].attr;
      if (attr.sample_id_all && (attr.sample_type & PERF_SAMPLE_TIME)) {
        abi::ParsedSampleId& id = parsed_id_;
        const abi::ParseStatus status = abi::parse_sample_id(record.bytes, attr.sample_type, id);
        if (!status.ok()) {
          return malformed_at(record.offset + status.offset, std::string("sample_id trailer of ") +
                                                                 record_type_name(type) + ": " +
                                                                 abi::to_string(status.error));
        }
        time = std::to_string(id.time);
      }
    }
    std::string line;
    if (type == PERF_RECORD_SAMPLE) {
      std::string extra;
      if (Expected<void> ok = sample(record, attr_index, time, line, extra); !ok) return ok;
      std::fprintf(out_, "%#" PRIx64 " [%#x] %s: %s\n%s", record.offset, record.header.size,
                   time.c_str(), line.c_str(), extra.c_str());
      return {};
    }
    if (Expected<void> ok = describe(record, line); !ok) return ok;
    std::fprintf(out_, "%#" PRIx64 " [%#x] %s: %s\n", record.offset, record.header.size,
                 time.c_str(), line.c_str());
    return {};
  }

  // Non-sample records. Bodies are read with a bounded cursor; the trailer is not looked at.
  Expected<void> describe(const RecordView& record, std::string& line) {
    const std::uint32_t type = record.header.type;
    support::ByteReader in(record.bytes.subspan(sizeof(perf_event_header)),
                           record.offset + sizeof(perf_event_header));
    const std::string name_text = record_type_name(type);
    const char* name = name_text.c_str();
    char buf[512];
    switch (type) {
      case PERF_RECORD_MMAP:
      case PERF_RECORD_MMAP2: {
        std::uint32_t pid = 0, tid = 0, maj = 0, min = 0, prot = 0, flags = 0;
        std::uint64_t start = 0, len = 0, pgoff = 0, ino = 0, ino_gen = 0;
        std::uint8_t id_bytes[24] = {};  // maj, min, ino, ino_generation or a build id
        std::string path;
        in.read(pid) && in.read(tid) && in.read(start) && in.read(len) && in.read(pgoff);
        if (type == PERF_RECORD_MMAP2) {
          in.read(id_bytes) && in.read(prot) && in.read(flags);
          std::memcpy(&maj, id_bytes, 4);
          std::memcpy(&min, id_bytes + 4, 4);
          std::memcpy(&ino, id_bytes + 8, 8);
          std::memcpy(&ino_gen, id_bytes + 16, 8);
        }
        in.c_string(path);
        if (!in.ok()) break;
        if (type == PERF_RECORD_MMAP) {
          std::snprintf(buf, sizeof buf,
                        "%s %u/%u: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 "]: ", name, pid, tid,
                        start, len, pgoff);
        } else {
          // PERF_RECORD_MISC_MMAP_BUILD_ID: {u8 size; u8 pad[3]; u8 build_id[20]} replaces the
          // device and inode.
          std::string id =
              std::to_string(maj) + ":" + std::to_string(min) + " " + std::to_string(ino);
          if (record.header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
            id = "build-id ";
            const std::size_t n = std::min<std::size_t>(id_bytes[0], 20);
            char byte[3];
            for (std::size_t i = 0; i < n; ++i) {
              std::snprintf(byte, sizeof byte, "%02x", id_bytes[4 + i]);
              id += byte;
            }
          }
          std::snprintf(buf, sizeof buf,
                        "%s %u/%u: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 " %s]: %c%c%c ", name,
                        pid, tid, start, len, pgoff, id.c_str(), prot & 1 ? 'r' : '-',
                        prot & 2 ? 'w' : '-', prot & 4 ? 'x' : '-');
        }
        line = buf + path;
        return {};
      }
      case PERF_RECORD_COMM: {
        std::uint32_t pid = 0, tid = 0;
        std::string comm;
        if (!in.read(pid) || !in.read(tid) || !in.c_string(comm)) break;
        const bool exec = record.header.misc & PERF_RECORD_MISC_COMM_EXEC;
        line = name_text + (exec ? " exec" : "") + ": " + comm + ":" + std::to_string(pid) + "/" +
               std::to_string(tid);
        return {};
      }
      case PERF_RECORD_FORK:
      case PERF_RECORD_EXIT: {
        std::uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
        std::uint64_t time = 0;
        if (!in.read(pid) || !in.read(ppid) || !in.read(tid) || !in.read(ptid) || !in.read(time)) {
          break;
        }
        std::snprintf(buf, sizeof buf, "%s(%u:%u):(%u:%u)", name, pid, tid, ppid, ptid);
        line = buf;
        return {};
      }
      case PERF_RECORD_LOST: {
        std::uint64_t id = 0, lost = 0;
        if (!in.read(id) || !in.read(lost)) break;
        line = name_text + " id " + std::to_string(id) + " lost " + std::to_string(lost);
        return {};
      }
      case PERF_RECORD_THROTTLE:
      case PERF_RECORD_UNTHROTTLE: {
        std::uint64_t time = 0, id = 0, stream_id = 0;
        if (!in.read(time) || !in.read(id) || !in.read(stream_id)) break;
        line = name_text + " time " + std::to_string(time) + " id " + std::to_string(id) +
               " stream_id " + std::to_string(stream_id);
        return {};
      }
      case PERF_RECORD_AUX: {
        std::uint64_t offset = 0, size = 0, flags = 0;
        if (!in.read(offset) || !in.read(size) || !in.read(flags)) break;
        line = name_text + " offset " + hex(offset) + " size " + hex(size) + " flags " +
               hex(flags) + " [" + aux_flags_text(flags) + "]";
        return {};
      }
      case PERF_RECORD_ITRACE_START: {
        std::uint32_t pid = 0, tid = 0;
        if (!in.read(pid) || !in.read(tid)) break;
        line = name_text + " pid " + std::to_string(pid) + " tid " + std::to_string(tid);
        return {};
      }
      case PERF_RECORD_LOST_SAMPLES: {
        std::uint64_t lost = 0;
        if (!in.read(lost)) break;
        line = name_text + " lost " + std::to_string(lost);
        return {};
      }
      default:
        // The synthesized types perf knows carry no body worth a size; every other one says it.
        line = name_text;
        if (type < perfdata::kRecordHeaderAttr || known_record_type_name(type) == nullptr) {
          line += " size " + std::to_string(record.header.size);
        }
        return {};
    }
    return malformed_at(in.failed_at(), name_text + " body is shorter than its fields");
  }

  Expected<void> sample(const RecordView& record, int attr_index, std::string& time,
                        std::string& line, std::string& extra) {
    if (attr_index < 0) {
      line =
          "PERF_RECORD_SAMPLE with an id no attr lists, size " + std::to_string(record.header.size);
      return {};
    }
    const perf_event_attr& attr = reader_.attrs()[attr_index].attr;
    abi::ParsedSample& s = parsed_;
    const abi::ParseStatus status =
        abi::parse_sample(record.bytes, abi::SampleFormat::from_attr(attr), s);
    if (!status.ok()) {
      return malformed_at(record.offset + status.offset,
                          std::string("PERF_RECORD_SAMPLE: ") + abi::to_string(status.error));
    }
    const std::uint64_t t = s.sample_type;
    if (t & PERF_SAMPLE_TIME) time = std::to_string(s.time);
    line = "PERF_RECORD_SAMPLE " + event_name(attr, reader_.features());
    if (t & PERF_SAMPLE_TID) line += " " + std::to_string(s.pid) + "/" + std::to_string(s.tid);
    if (t & PERF_SAMPLE_CPU) line += " cpu " + std::to_string(s.cpu);
    if (t & PERF_SAMPLE_IP) line += " ip " + address(s.pid, s.ip);
    if (t & PERF_SAMPLE_ADDR) line += " addr " + hex(s.addr);
    if (t & PERF_SAMPLE_PERIOD) line += " period " + std::to_string(s.period);
    if (t & PERF_SAMPLE_CALLCHAIN) {
      line += " callchain [";
      for (std::size_t i = 0; i < s.callchain.size(); ++i) {
        const std::uint64_t pc = s.callchain[i];
        if (i != 0) line += " <- ";
        line += pc >= PERF_CONTEXT_MAX ? context_name(pc) : address(s.pid, pc);
      }
      line += "]";
    }
    if (t & PERF_SAMPLE_RAW) line += " raw " + std::to_string(s.raw_size);
    if (t & PERF_SAMPLE_AUX) {
      line += " aux " + std::to_string(s.aux_size);
      if (s.aux.size != 0)
        aux(record.bytes.subspan(s.aux.offset, s.aux.size), attr_index, s.pid, extra);
    }
    return {};
  }

  static std::string context_name(std::uint64_t marker) {
    switch (marker) {
      case PERF_CONTEXT_HV:
        return "[hv]";
      case PERF_CONTEXT_KERNEL:
        return "[kernel]";
      case PERF_CONTEXT_USER:
        return "[user]";
      case PERF_CONTEXT_GUEST:
        return "[guest]";
      case PERF_CONTEXT_GUEST_KERNEL:
        return "[guest kernel]";
      case PERF_CONTEXT_GUEST_USER:
        return "[guest user]";
      default:
        return "[context " + hex(marker) + "]";
    }
  }

  // Without GROUP_DESC (perf report shows only group leaders' samples, so files whose leader is an
  // AUX event that writes no samples leave the groups out): the one attr whose PMU has a trace
  // decoder; the sample's own attr when there is none or more than one.
  std::uint32_t aux_leader_without_groups(int attr_index) {
    const Features& features = reader_.features();
    int found = -1;
    for (std::size_t i = 0; i < reader_.attrs().size(); ++i) {
      const std::string* pmu = features.pmu_name(reader_.attrs()[i].attr.type);
      if (pmu == nullptr || decoder_for(*pmu) == nullptr) continue;
      if (found != -1) return static_cast<std::uint32_t>(attr_index);
      found = static_cast<int>(i);
    }
    return static_cast<std::uint32_t>(found != -1 ? found : attr_index);
  }

  // The AUX bytes of a sample, decoded by its group leader's PMU decoder, else dumped in hex.
  void aux(std::span<const std::uint8_t> bytes, int attr_index, std::uint32_t pid,
           std::string& extra) {
    const Features& features = reader_.features();
    const GroupDesc* group = features.group_of(static_cast<std::uint32_t>(attr_index));
    const std::uint32_t leader =
        group != nullptr ? group->leader : aux_leader_without_groups(attr_index);
    const std::string* pmu = features.pmu_name(reader_.attrs()[leader].attr.type);
    trace::AuxDecoder* decoder = pmu != nullptr ? decoder_for(*pmu) : nullptr;
    if (decoder != nullptr) {
      SymbolizeContext context{options_.symbols, pid};
      if (options_.symbols != nullptr) decoder->set_symbolizer(&symbolize_for_decoder, &context);
      extra += "    aux " + *pmu + ":\n";
      if (const Expected<void> decoded = decoder->decode(bytes, "      ", extra); !decoded) {
        extra += "      aux decode error at byte " + std::to_string(decoded.error().offset) + ": " +
                 decoded.error().message + "\n";
      }
      decoder->set_symbolizer(nullptr, nullptr);
      return;
    }
    extra += "    aux (" +
             (pmu != nullptr ? *pmu
                             : "leader type " + std::to_string(reader_.attrs()[leader].attr.type)) +
             ", no decoder):";
    char byte[4];
    for (std::size_t i = 0; i < bytes.size() && i < kHexDumpBytes; ++i) {
      std::snprintf(byte, sizeof byte, " %02x", bytes[i]);
      extra += byte;
    }
    if (bytes.size() > kHexDumpBytes) extra += " ...";
    extra += "\n";
  }

  trace::AuxDecoder* decoder_for(const std::string& pmu) {
    auto [it, fresh] = decoders_.try_emplace(pmu);
    if (fresh) it->second = trace::make_decoder(pmu);
    return it->second.get();
  }

  const Reader& reader_;
  std::FILE* out_;
  ScriptOptions options_;
  std::map<std::string, std::unique_ptr<trace::AuxDecoder>> decoders_;
  // Reused for every record: parsing keeps their vectors' capacity.
  abi::ParsedSample parsed_;
  abi::ParsedSampleId parsed_id_;
};

}  // namespace

std::string aux_flags_text(std::uint64_t flags) {
  static constexpr struct {
    std::uint64_t bit;
    const char* name;
  } kFlags[] = {{PERF_AUX_FLAG_TRUNCATED, "TRUNCATED"},
                {PERF_AUX_FLAG_OVERWRITE, "OVERWRITE"},
                {PERF_AUX_FLAG_PARTIAL, "PARTIAL"},
                {PERF_AUX_FLAG_COLLISION, "COLLISION"}};
  std::string text;
  auto add = [&](const std::string& part) { text += (text.empty() ? "" : "|") + part; };
  std::uint64_t rest = flags;
  for (const auto& f : kFlags) {
    if (flags & f.bit) add(f.name);
    rest &= ~f.bit;
  }
  if (rest & PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK) {
    add("format=" + hex((rest & PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK) >> 8));
    rest &= ~static_cast<std::uint64_t>(PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK);
  }
  if (rest != 0) add(hex(rest));
  return text.empty() ? "none" : text;
}

Expected<void> print_script(const Reader& reader, std::FILE* out, const ScriptOptions& options) {
  return Printer(reader, out, options).run();
}

}  // namespace userperf::report
