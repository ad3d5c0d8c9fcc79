#include "bpf/loader/libbpf_view.hpp"

#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

namespace userperf::bpf::loader {
namespace {

// libbpf's print hook is process-wide: one open at a time owns it.
std::mutex print_hook_mutex;
std::string* captured_log = nullptr;  // guarded by print_hook_mutex

int capture_print(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG || captured_log == nullptr) return 0;
  char line[512];
  const int n = std::vsnprintf(line, sizeof line, format, args);
  if (n > 0) captured_log->append(line);
  return n;
}

// Installs capture_print for its lifetime, then restores the previous hook.
class CapturedLibbpfLog {
 public:
  CapturedLibbpfLog() : lock_(print_hook_mutex) {
    captured_log = &log_;
    previous_ = libbpf_set_print(capture_print);
  }
  ~CapturedLibbpfLog() {
    libbpf_set_print(previous_);
    captured_log = nullptr;
  }
  CapturedLibbpfLog(const CapturedLibbpfLog&) = delete;
  CapturedLibbpfLog& operator=(const CapturedLibbpfLog&) = delete;
  const std::string& text() const { return log_; }

 private:
  std::lock_guard<std::mutex> lock_;
  std::string log_;
  libbpf_print_fn_t previous_ = nullptr;
};

struct ObjectCloser {
  void operator()(bpf_object* object) const { bpf_object__close(object); }
};

MapSpec map_spec(const bpf_map* map) {
  MapSpec spec;
  spec.name = bpf_map__name(map);
  spec.type = static_cast<std::uint32_t>(bpf_map__type(map));
  spec.key_size = bpf_map__key_size(map);
  spec.value_size = bpf_map__value_size(map);
  spec.max_entries = bpf_map__max_entries(map);
  spec.map_flags = bpf_map__map_flags(map);
  return spec;
}

}  // namespace

Expected<LibbpfObject> open_with_libbpf(std::span<const std::uint8_t> checked_bytes,
                                        const std::string& object_name) {
  CapturedLibbpfLog log;
  errno = 0;
  LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = object_name.c_str());
  std::unique_ptr<bpf_object, ObjectCloser> object(
      bpf_object__open_mem(checked_bytes.data(), checked_bytes.size(), &opts));
  if (!object) {
    // libbpf's own codes (LIBBPF_ERRNO__*, from 4000) are format errors: EINVAL.
    const int code = errno > 0 && errno < 4000 ? errno : EINVAL;
    std::string message = "libbpf could not parse the object";
    if (!log.text().empty()) message += ": " + log.text();
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return make_error(code, message);
  }
  LibbpfObject result;
  bpf_program* program = nullptr;
  bpf_object__for_each_program(program, object.get()) {
    const std::string section = bpf_program__section_name(program);
    auto type = static_cast<std::uint32_t>(bpf_program__type(program));
    // ebpf_exporter's "perf_event/type=0,config=3,...": libbpf knows only "perf_event", the tool
    // registers the prefix itself (libbpf_register_prog_handler) and libbpf then loads them as
    // perf_event programs, which the kernel accepts. Not registered here: that is process-wide.
    if (type == BPF_PROG_TYPE_UNSPEC && section.starts_with("perf_event/")) {
      type = BPF_PROG_TYPE_PERF_EVENT;
    }
    result.programs.push_back({bpf_program__name(program), section, type});
  }
  bpf_map* map = nullptr;
  bpf_object__for_each_map(map, object.get()) {
    if (bpf_map__is_internal(map)) continue;
    MapSpec spec = map_spec(map);
    // `__array(values, struct inner)`: libbpf parsed the inner definition into a template map
    // (named "outer.inner"), which bpf_object__load would create for inner_map_fd.
    if (bpf_map* inner = bpf_map__inner_map(map)) spec.inner_map.push_back(map_spec(inner));
    result.btf_maps.push_back(std::move(spec));
  }
  return result;
}

}  // namespace userperf::bpf::loader
