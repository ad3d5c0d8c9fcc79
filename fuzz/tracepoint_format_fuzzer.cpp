// Tracepoint descriptors with arbitrary provider, name and fields (include/userperf/tracepoint.h)
// -> the tracepoint PMU's registry (src/pmu/tracepoint: tracepoint_check, register, unregister),
// the libtraceevent format text it writes for a descriptor (tracepoint_format), and the
// HEADER_TRACING_DATA body the perf.data writer makes of those texts (encode_tracing_data). The
// input is a script: make a descriptor, register, unregister or check one. Everything registered
// is unregistered at the end of each input. No id is ever defined here (tracepoint_define binds
// a name for the life of the process, which would carry state from one input to the next).
// What tracepoint.h and tracing_data.hpp promise, checked per input:
// - tracepoint_check accepts exactly: ABI version 1; provider, name and field names C identifiers
//   of 1 to 63 characters; at most 16 fields; kinds 1..10; no field name twice;
// - register: a refused descriptor is -EINVAL; a valid one is 0, or -EEXIST when another
//   registered descriptor of its name has other fields; registering it again is 0;
// - after every descriptor is unregistered, a name takes any fields again (nothing is left bound);
// - the format text of a valid descriptor has its name and id, the four common fields, one line
//   per field in order with its type, an offset past the previous field's end aligned to its size,
//   and the print fmt line;
// - encode_tracing_data's body has the documented layout and gives back every format, grouped by
//   provider in order of first appearance.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "byte_script.hpp"
#include "perfdata/tracing_data.hpp"
#include "pmu/tracepoint/tracepoint_pmu.hpp"
#include "userperf/tracepoint.h"

using namespace userperf;

namespace {

[[noreturn]] void broken(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "tracepoint_format invariant broken: %s %s\n", what, detail.c_str());
  std::abort();
}

// A descriptor and the strings it points at.
struct Descriptor {
  userperf_tracepoint tp{};
  std::string provider, name;
  bool null_provider = false, null_fields = false;
  std::vector<std::string> field_names;
  std::vector<userperf_tp_field> fields;
  bool registered = false;

  void link() {
    tp.provider = null_provider ? nullptr : provider.c_str();
    tp.name = name.c_str();
    for (std::size_t i = 0; i < fields.size(); ++i) fields[i].name = field_names[i].c_str();
    tp.fields = null_fields ? nullptr : fields.data();
  }
  std::string full_name() const { return provider + ":" + name; }
};

bool identifier(const std::string& s, bool null) {
  if (null || s.empty() || s.size() > USERPERF_TP_MAX_NAME) return false;
  if (s[0] >= '0' && s[0] <= '9') return false;
  for (const char c : s) {
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      return false;
  }
  return true;
}

bool valid(const Descriptor& d) {
  if (d.tp.abi_version != USERPERF_TP_ABI_VERSION) return false;
  if (!identifier(d.provider, d.null_provider) || !identifier(d.name, false)) return false;
  if (d.tp.nr_fields > USERPERF_TP_MAX_FIELDS) return false;
  if (d.tp.nr_fields > 0 && d.null_fields) return false;
  for (std::uint32_t i = 0; i < d.tp.nr_fields; ++i) {
    if (!identifier(d.field_names[i], false)) return false;
    if (d.fields[i].kind < USERPERF_TP_U8 || d.fields[i].kind > USERPERF_TP_BYTES) return false;
    for (std::uint32_t j = 0; j < i; ++j) {
      if (d.field_names[i] == d.field_names[j]) return false;
    }
  }
  return true;
}

bool same_fields(const Descriptor& a, const Descriptor& b) {
  if (a.tp.nr_fields != b.tp.nr_fields) return false;
  for (std::uint32_t i = 0; i < a.tp.nr_fields; ++i) {
    if (a.fields[i].kind != b.fields[i].kind || a.field_names[i] != b.field_names[i]) return false;
  }
  return true;
}

std::string text(fuzz::ByteScript& in) {
  // Mostly identifiers from a small pool (so that names repeat), sometimes any bytes.
  static const char* const kPool[] = {"a", "b", "myapp", "request", "id", "path", "_x9", "Z"};
  if (in.range<int>(0, 3) != 0) return kPool[in.range<int>(0, 7)];
  const auto bytes = in.bytes(in.range<std::size_t>(0, 80));
  // A C string: what the library reads ends at the first NUL.
  const std::string all(bytes.begin(), bytes.end());
  return all.substr(0, all.find('\0'));
}

std::unique_ptr<Descriptor> make_descriptor(fuzz::ByteScript& in) {
  auto d = std::make_unique<Descriptor>();
  d->tp.abi_version =
      in.range<int>(0, 15) == 0 ? in.take<std::uint32_t>() : USERPERF_TP_ABI_VERSION;
  d->provider = text(in);
  d->null_provider = in.range<int>(0, 31) == 0;
  d->name = text(in);
  const std::uint32_t n = in.range<std::uint32_t>(0, 18);
  for (std::uint32_t i = 0; i < n; ++i) {
    d->field_names.push_back(text(in));
    d->fields.push_back({nullptr, in.range<std::uint32_t>(0, 11)});
  }
  d->tp.nr_fields = n;
  d->null_fields = n > 0 && in.range<int>(0, 31) == 0;
  d->link();
  return d;
}

// The size and signedness tracepoint_format gives a field's type.
void check_format(const Descriptor& d, std::uint64_t id, const std::string& format) {
  const std::string head = "name: " + d.name + "\nID: " + std::to_string(id) + "\nformat:\n";
  if (format.compare(0, head.size(), head) != 0) broken("format head", format);
  std::size_t at = format.find("\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n");
  if (at == std::string::npos) broken("common fields", format);
  at = format.find("\n\n", at) + 2;
  std::uint32_t end = 8;
  for (std::uint32_t i = 0; i < d.tp.nr_fields; ++i) {
    const std::size_t line_end = format.find('\n', at);
    if (line_end == std::string::npos) broken("field line", format);
    const std::string line = format.substr(at, line_end - at);
    const std::string& name = d.field_names[i];
    const std::size_t decl_end = line.find(';');
    if (line.compare(0, 7, "\tfield:") != 0 || decl_end == std::string::npos ||
        line.compare(decl_end - name.size() - 1, name.size() + 1, " " + name) != 0) {
      broken("field declaration", line);
    }
    unsigned offset = 0, size = 0, is_signed = 0;
    if (std::sscanf(line.c_str() + decl_end, ";\toffset:%u;\tsize:%u;\tsigned:%u;", &offset, &size,
                    &is_signed) != 3) {
      broken("field numbers", line);
    }
    const std::uint32_t kind = d.fields[i].kind;
    const bool dynamic = kind == USERPERF_TP_STRING || kind == USERPERF_TP_BYTES;
    const unsigned want_size = dynamic ? 4 : 1u << ((kind - 1) % 4);
    if (size != want_size) broken("field size", line);
    if (!dynamic && is_signed != (kind >= USERPERF_TP_S8 ? 1u : 0u)) broken("field sign", line);
    if (offset < end || offset % size != 0) broken("field offset", line);
    // The type's first token, as libtraceevent reads it: a field may be named "x__data_loc".
    if (dynamic != (line.compare(0, 18, "\tfield:__data_loc ") == 0)) broken("__data_loc", line);
    end = offset + size;
    at = line_end + 1;
  }
  if (format.compare(at, 12, "\nprint fmt: ") != 0 || format.back() != '\n') {
    broken("print fmt", format.substr(at));
  }
}

// Reads encode_tracing_data's layout back (tracing_data.hpp).
struct BodyReader {
  const std::vector<std::uint8_t>& b;
  std::size_t at = 0;
  void need(std::size_t n) {
    if (n > b.size() - at) broken("TRACING_DATA body too short");
  }
  template <class T>
  T number() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, b.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  std::string cstring() {
    const auto* p = static_cast<const std::uint8_t*>(std::memchr(b.data() + at, 0, b.size() - at));
    if (p == nullptr) broken("TRACING_DATA string without NUL");
    std::string s(reinterpret_cast<const char*>(b.data() + at), p - (b.data() + at));
    at = static_cast<std::size_t>(p - b.data()) + 1;
    return s;
  }
  std::string sized(std::uint64_t n) {
    need(n);
    std::string s(reinterpret_cast<const char*>(b.data() + at), n);
    at += n;
    return s;
  }
};

void check_tracing_data(const std::vector<perfdata::TracepointFormat>& formats) {
  const std::vector<std::uint8_t> body = perfdata::encode_tracing_data(formats);
  BodyReader r{body};
  if (r.sized(10) != std::string("\x17\x08\x44tracing", 10)) broken("TRACING_DATA magic");
  if (r.cstring() != "0.6") broken("TRACING_DATA version");
  if (r.number<std::uint8_t>() != 0 || r.number<std::uint8_t>() != sizeof(long)) {
    broken("TRACING_DATA endianness/long");
  }
  (void)r.number<std::uint32_t>();  // page size
  for (const char* section : {"header_page", "header_event"}) {
    if (r.cstring() != section) broken("TRACING_DATA header section");
    (void)r.sized(r.number<std::uint64_t>());
  }
  if (r.number<std::uint32_t>() != 0) broken("TRACING_DATA ftrace formats");
  // The systems in order of first appearance, each with its events' formats in order.
  std::vector<std::string> systems;
  for (const auto& f : formats) {
    bool seen = false;
    for (const auto& s : systems) seen = seen || s == f.system;
    if (!seen) systems.push_back(f.system);
  }
  if (r.number<std::uint32_t>() != systems.size()) broken("TRACING_DATA system count");
  for (const std::string& system : systems) {
    if (r.cstring() != system) broken("TRACING_DATA system name", system);
    std::vector<const perfdata::TracepointFormat*> events;
    for (const auto& f : formats) {
      if (f.system == system) events.push_back(&f);
    }
    if (r.number<std::uint32_t>() != events.size()) broken("TRACING_DATA event count", system);
    for (const perfdata::TracepointFormat* e : events) {
      if (r.sized(r.number<std::uint64_t>()) != e->format) broken("TRACING_DATA format", e->name);
    }
  }
  if (r.number<std::uint32_t>() != 0 || r.number<std::uint32_t>() != 0 ||
      r.number<std::uint64_t>() != 0 || r.at != body.size()) {
    broken("TRACING_DATA tail");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::ByteScript in(data, size);
  std::vector<std::unique_ptr<Descriptor>> descriptors;
  int steps = 0;
  while (in.remaining() > 0 && ++steps < 64) {
    const int op = in.range<int>(0, 3);
    if (op == 0 || descriptors.empty()) {
      if (descriptors.size() < 12) descriptors.push_back(make_descriptor(in));
      continue;
    }
    Descriptor& d = *descriptors[in.range<std::size_t>(0, descriptors.size() - 1)];
    const bool ok = valid(d);
    switch (op) {
      case 1: {
        bool conflict = false;
        for (const auto& other : descriptors) {
          conflict = conflict || (other.get() != &d && other->registered &&
                                  other->full_name() == d.full_name() && !same_fields(*other, d));
        }
        const int ret = pmu::tracepoint_register(d.tp);
        const int want = !ok ? -EINVAL : (conflict && !d.registered) ? -EEXIST : 0;
        if (ret != want) broken("register", d.full_name() + " " + std::to_string(ret));
        d.registered = d.registered || ret == 0;
        break;
      }
      case 2:
        pmu::tracepoint_unregister(d.tp);
        d.registered = false;
        if (d.tp.enabled != 0 || d.tp.library_slot != 0) broken("unregistered but bound");
        break;
      default: {
        const Expected<void> checked = pmu::tracepoint_check(d.tp);
        if (checked.ok() != ok) broken("tracepoint_check verdict", d.full_name());
        if (!checked && (checked.error().code != EINVAL || checked.error().message.empty())) {
          broken("tracepoint_check error");
        }
      }
    }
  }

  std::vector<perfdata::TracepointFormat> formats;
  std::uint64_t id = 1000;
  for (const auto& d : descriptors) {
    if (!valid(*d)) continue;
    const std::string format = pmu::tracepoint_format(d->tp, id);
    check_format(*d, id, format);
    formats.push_back({d->provider, d->name, id++, format});
  }
  check_tracing_data(formats);

  for (const auto& d : descriptors) pmu::tracepoint_unregister(d->tp);
  // Nothing is left registered: a descriptor of each valid name with other fields registers.
  for (const auto& d : descriptors) {
    if (!valid(*d)) continue;
    userperf_tp_field field{"probe_field_of_nothing", USERPERF_TP_U64};
    userperf_tracepoint probe{0, USERPERF_TP_ABI_VERSION, d->tp.provider, d->tp.name, 1, &field, 0};
    if (pmu::tracepoint_register(probe) != 0) broken("a name stayed registered", d->full_name());
    pmu::tracepoint_unregister(probe);
  }
  return 0;
}
