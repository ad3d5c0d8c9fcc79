#include "report/pprof_writer.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <vector>

#include "report/protobuf_encoder.hpp"

namespace userperf::report {

namespace {

// profile.proto's field numbers.
namespace field {
// Profile
constexpr std::uint32_t kSampleType = 1, kSample = 2, kMapping = 3, kLocation = 4, kFunction = 5,
                        kStringTable = 6, kPeriodType = 11, kPeriod = 12, kComment = 13,
                        kDefaultSampleType = 14;
// ValueType
constexpr std::uint32_t kType = 1, kUnit = 2;
// Sample
constexpr std::uint32_t kLocationId = 1, kValue = 2, kLabel = 3;
// Label
constexpr std::uint32_t kKey = 1, kStr = 2, kNum = 3;
// Mapping
constexpr std::uint32_t kMappingId = 1, kMemoryStart = 2, kMemoryLimit = 3, kFileOffset = 4,
                        kFilename = 5, kBuildId = 6, kHasFunctions = 7, kHasFilenames = 8,
                        kHasLineNumbers = 9;
// Location
constexpr std::uint32_t kLocationOwnId = 1, kLocationMappingId = 2, kAddress = 3, kLine = 4;
// Line
constexpr std::uint32_t kFunctionId = 1, kLineNumber = 2;
// Function
constexpr std::uint32_t kFunctionOwnId = 1, kName = 2, kSystemName = 3, kFunctionFilename = 4,
                        kStartLine = 5;
}  // namespace field

constexpr const char* kUnknown = "[unknown]";

struct ValueTypeNames {
  std::string type, unit;
};

// The summed period's type: pprof's names where there is a convention (cpu/nanoseconds is what Go
// and perf_to_profile write for CPU time).
ValueTypeNames period_type(const EventProfile& event) {
  const perf_event_attr& attr = event.attr;
  if (attr.type == PERF_TYPE_SOFTWARE &&
      (attr.config == PERF_COUNT_SW_CPU_CLOCK || attr.config == PERF_COUNT_SW_TASK_CLOCK)) {
    return {"cpu", "nanoseconds"};
  }
  if (attr.type == PERF_TYPE_TRACEPOINT) return {"events", "count"};
  return {event.name, "count"};
}

// The sampling period in the period type's unit, or 0 when it varies (a frequency on an event
// whose period is not time).
std::uint64_t sampling_period(const EventProfile& event) {
  const perf_event_attr& attr = event.attr;
  if (!attr.freq) return attr.sample_period;
  const bool clock = attr.type == PERF_TYPE_SOFTWARE && (attr.config == PERF_COUNT_SW_CPU_CLOCK ||
                                                         attr.config == PERF_COUNT_SW_TASK_CLOCK);
  return clock && attr.sample_freq != 0 ? 1'000'000'000 / attr.sample_freq : 0;
}

void value_type(ProtoEncoder& out, std::uint32_t field_number, StringTable& strings,
                const ValueTypeNames& names) {
  ProtoEncoder message;
  message.int64_field(field::kType, strings.index(names.type));
  message.int64_field(field::kUnit, strings.index(names.unit));
  out.message_field(field_number, message);
}

void label(ProtoEncoder& sample, ProtoEncoder& scratch, std::int64_t key, std::int64_t str,
           std::int64_t num) {
  scratch.clear();
  scratch.int64_field(field::kKey, key);
  scratch.int64_field(field::kStr, str);
  scratch.int64_field(field::kNum, num);
  sample.message_field(field::kLabel, scratch);
}

}  // namespace

std::string pprof_function_name(const Profile& profile, FunctionId function) {
  const Function& f = profile.functions[function];
  if (f.name == kUnknown && profile.dsos[f.dso].name != kUnknown) {
    return f.name + " " + profile.dsos[f.dso].name;
  }
  return f.name;
}

std::string encode_pprof(const Profile& profile, const PprofOptions& options) {
  ProtoEncoder out;
  StringTable strings;
  const EventProfile& event = profile.events.at(static_cast<std::size_t>(options.event));
  const ValueTypeNames period = period_type(event);

  value_type(out, field::kSampleType, strings, {"samples", "count"});
  value_type(out, field::kSampleType, strings, period);

  // Samples, noting which locations they use: the tables hold only what the event's samples
  // reach (the file's other events have stacks of their own).
  std::vector<bool> used_locations(profile.locations.size());
  const std::int64_t pid_key = strings.index("pid");
  const std::int64_t thread_key = strings.index("thread");
  const std::int64_t comm_key = strings.index("comm");
  ProtoEncoder sample, scratch;
  std::vector<std::uint64_t> ids;
  // Samples through each dso (once per stack): pprof takes the first Mapping for the program's
  // main binary, so the executable goes first: the dso named as the command of the most samples
  // (the kernel's comm is the executable's name cut to 15 bytes), then the dso most stacks pass
  // through. Counting alone is not enough: libc is on as many stacks as the executable (it calls
  // main) and on those of exit handlers too.
  std::vector<std::uint64_t> through(profile.dsos.size()), as_command(profile.dsos.size());
  std::vector<std::size_t> counted(profile.dsos.size(), SIZE_MAX);
  for (std::size_t s = 0; s < profile.stacks.size(); ++s) {
    const Stack& stack = profile.stacks[s];
    if (stack.event != options.event || (options.accept && !options.accept(stack))) continue;
    sample.clear();
    ids.clear();
    for (LocationId location : profile.frames_of(stack)) {
      ids.push_back(location + 1);  // pprof's ids start at 1: 0 means none
      used_locations[location] = true;
      const DsoId dso = profile.locations[location].dso;
      if (counted[dso] != s) {
        counted[dso] = s;
        through[dso] += stack.samples;
        const std::string& command = profile.threads[stack.thread].command;
        if (!command.empty() && profile.dsos[dso].name.compare(0, 15, command) == 0) {
          as_command[dso] += stack.samples;
        }
      }
    }
    sample.packed_uint64_field(field::kLocationId, ids);
    const std::int64_t values[] = {static_cast<std::int64_t>(stack.samples),
                                   static_cast<std::int64_t>(stack.period)};
    sample.packed_int64_field(field::kValue, values);
    const Thread& thread = profile.threads[stack.thread];
    label(sample, scratch, pid_key, 0, thread.pid);
    label(sample, scratch, thread_key, 0, thread.tid);
    label(sample, scratch, comm_key, strings.index(thread.command), 0);
    out.message_field(field::kSample, sample);
  }

  std::vector<bool> used_functions(profile.functions.size());
  std::vector<bool> used_dsos(profile.dsos.size());
  std::vector<bool> dso_has_files(profile.dsos.size());
  std::vector<bool> dso_has_lines(profile.dsos.size());
  for (std::size_t i = 0; i < profile.locations.size(); ++i) {
    if (!used_locations[i]) continue;
    const Location& location = profile.locations[i];
    const Function& function = profile.functions[location.function];
    used_functions[location.function] = true;
    used_dsos[location.dso] = true;
    if (!function.file.empty()) dso_has_files[location.dso] = true;
    if (location.line != 0) dso_has_lines[location.dso] = true;
  }

  ProtoEncoder message, line;
  std::vector<std::size_t> mapping_order;
  for (std::size_t i = 0; i < profile.dsos.size(); ++i) {
    if (used_dsos[i]) mapping_order.push_back(i);
  }
  std::stable_sort(mapping_order.begin(), mapping_order.end(), [&](std::size_t a, std::size_t b) {
    if (profile.dsos[a].kernel != profile.dsos[b].kernel) return !profile.dsos[a].kernel;
    if (as_command[a] != as_command[b]) return as_command[a] > as_command[b];
    return through[a] > through[b];
  });
  for (std::size_t i : mapping_order) {
    const Dso& dso = profile.dsos[i];
    message.clear();
    message.uint64_field(field::kMappingId, i + 1);
    message.uint64_field(field::kMemoryStart, 0);
    message.uint64_field(field::kMemoryLimit, ~std::uint64_t{0});
    message.uint64_field(field::kFileOffset, 0);
    message.int64_field(field::kFilename, strings.index(dso.path.empty() ? dso.name : dso.path));
    message.int64_field(field::kBuildId, strings.index(dso.build_id));
    message.bool_field(field::kHasFunctions, true);
    message.bool_field(field::kHasFilenames, dso_has_files[i]);
    message.bool_field(field::kHasLineNumbers, dso_has_lines[i]);
    out.message_field(field::kMapping, message);
  }
  for (std::size_t i = 0; i < profile.locations.size(); ++i) {
    if (!used_locations[i]) continue;
    const Location& location = profile.locations[i];
    message.clear();
    message.uint64_field(field::kLocationOwnId, i + 1);
    message.uint64_field(field::kLocationMappingId, location.dso + 1);
    message.uint64_field(field::kAddress, location.address);
    line.clear();
    line.uint64_field(field::kFunctionId, location.function + 1);
    line.int64_field(field::kLineNumber, location.line);
    message.message_field(field::kLine, line);
    out.message_field(field::kLocation, message);
  }
  for (std::size_t i = 0; i < profile.functions.size(); ++i) {
    if (!used_functions[i]) continue;
    const Function& function = profile.functions[i];
    // Names are demangled already and the mangled one is not kept: system_name is the same.
    const std::int64_t name =
        strings.index(pprof_function_name(profile, static_cast<FunctionId>(i)));
    message.clear();
    message.uint64_field(field::kFunctionOwnId, i + 1);
    message.int64_field(field::kName, name);
    message.int64_field(field::kSystemName, name);
    message.int64_field(field::kFunctionFilename, strings.index(function.file));
    message.int64_field(field::kStartLine, function.line);
    out.message_field(field::kFunction, message);
  }

  value_type(out, field::kPeriodType, strings, period);
  out.int64_field(field::kPeriod, static_cast<std::int64_t>(sampling_period(event)));
  std::vector<std::int64_t> comments;
  std::string comment = "userperf report";
  if (!options.source.empty()) comment += " of " + options.source;
  comments.push_back(strings.index(comment + ": event " + event.name));
  for (std::size_t i = 0; i < profile.events.size(); ++i) {
    if (static_cast<int>(i) == options.event || profile.events[i].samples == 0) continue;
    comments.push_back(strings.index("not in this profile: event " + profile.events[i].name + " (" +
                                     std::to_string(profile.events[i].samples) + " samples)"));
  }
  out.packed_int64_field(field::kComment, comments);
  out.int64_field(field::kDefaultSampleType, strings.index(period.type));

  // The string table last: every index above is known by now.
  for (const std::string& text : strings.strings()) out.bytes_field(field::kStringTable, text);
  return out.bytes();
}

Expected<void> write_pprof(const Profile& profile, const PprofOptions& options, std::FILE* out) {
  if (options.event < 0 || static_cast<std::size_t>(options.event) >= profile.events.size()) {
    return Error{EINVAL, "pprof: the file has no event " + std::to_string(options.event)};
  }
  const std::string encoded = encode_pprof(profile, options);
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return Error{ENOMEM, "gzip: deflateInit2 failed"};
  }
  // zpipe's loop: input in pieces zlib's 32-bit counts can hold, output a chunk at a time.
  unsigned char chunk[1 << 16];
  std::size_t consumed = 0;
  int flush = Z_NO_FLUSH;
  while (flush != Z_FINISH) {
    const std::size_t piece = std::min<std::size_t>(encoded.size() - consumed, 1u << 30);
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(encoded.data() + consumed));
    stream.avail_in = static_cast<uInt>(piece);
    consumed += piece;
    flush = consumed == encoded.size() ? Z_FINISH : Z_NO_FLUSH;
    do {
      stream.next_out = chunk;
      stream.avail_out = sizeof chunk;
      if (const int status = deflate(&stream, flush); status == Z_STREAM_ERROR) {
        deflateEnd(&stream);
        return Error{EIO, "gzip: deflate failed"};
      }
      const std::size_t size = sizeof chunk - stream.avail_out;
      if (size != 0 && std::fwrite(chunk, 1, size, out) != size) {
        const int code = errno != 0 ? errno : EIO;
        deflateEnd(&stream);
        return Error{code, "write failed"};
      }
    } while (stream.avail_out == 0);
  }
  deflateEnd(&stream);
  return {};
}

}  // namespace userperf::report
