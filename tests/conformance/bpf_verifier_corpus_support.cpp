#include "conformance/bpf_verifier_corpus_support.hpp"

#include <bpf/libbpf.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

#include "bpf/isa/assembler.hpp"
#include "support/kernel_bpf.hpp"

namespace userperf::conformance::verifier_corpus {

namespace {

namespace kernel_bpf = userperf::testing::kernel_bpf;

const std::string& corpus_dir() {
  static const std::string dir =
      std::string(USERPERF_SOURCE_DIR) + "/tests/data/bpf/verifier_corpus";
  return dir;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// The directives of a file: `# key: value` (assembly) or `// key: value` (C), in order.
std::vector<std::pair<std::string, std::string>> directives(const std::string& text,
                                                            std::string_view comment) {
  std::vector<std::pair<std::string, std::string>> result;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::string_view rest = trim(line);
    if (!rest.starts_with(comment)) continue;
    rest = trim(rest.substr(comment.size()));
    const auto colon = rest.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = trim(rest.substr(0, colon));
    if (key.empty() || key.find(' ') != std::string_view::npos) continue;
    result.emplace_back(std::string(key), std::string(trim(rest.substr(colon + 1))));
  }
  return result;
}

std::string_view comment_of(SourceKind kind) {
  return kind == SourceKind::kAssembly ? "#" : "//";
}

int errno_from_name(std::string_view name) {
  if (name == "ENOTSUPP") return kEnotsupp;
  for (int error = 1; error < 256; ++error) {
    const char* known = strerrorname_np(error);
    if (known != nullptr && name == known) return error;
  }
  return 0;
}

const std::map<std::string_view, std::uint32_t>& map_types() {
  static const std::map<std::string_view, std::uint32_t> types = {
      {"hash", BPF_MAP_TYPE_HASH},
      {"array", BPF_MAP_TYPE_ARRAY},
      {"percpu_hash", BPF_MAP_TYPE_PERCPU_HASH},
      {"percpu_array", BPF_MAP_TYPE_PERCPU_ARRAY},
      {"lru_hash", BPF_MAP_TYPE_LRU_HASH},
      {"perf_event_array", BPF_MAP_TYPE_PERF_EVENT_ARRAY},
      {"prog_array", BPF_MAP_TYPE_PROG_ARRAY},
      {"cgroup_array", BPF_MAP_TYPE_CGROUP_ARRAY},
      {"stack_trace", BPF_MAP_TYPE_STACK_TRACE},
      {"ringbuf", BPF_MAP_TYPE_RINGBUF},
      {"array_of_maps", BPF_MAP_TYPE_ARRAY_OF_MAPS},
      {"hash_of_maps", BPF_MAP_TYPE_HASH_OF_MAPS},
  };
  return types;
}

// "NAME TYPE key=K value=V entries=E [flags=F] [inner=TYPE:K:V:E[:F]]" (inner: a map-in-map's
// inner map, which the kernel side creates for inner_map_fd)
Expected<bpf::MapSpec> parse_map(const std::string& text) {
  std::istringstream words(text);
  bpf::MapSpec spec;
  std::string type;
  if (!(words >> spec.name >> type)) {
    return make_error(EINVAL, "map: expected NAME TYPE: " + text);
  }
  const auto known = map_types().find(type);
  if (known == map_types().end()) return make_error(EINVAL, "map: unknown type " + type);
  spec.type = known->second;
  std::string field;
  while (words >> field) {
    const auto equals = field.find('=');
    if (equals == std::string::npos) return make_error(EINVAL, "map: bad field " + field);
    const std::string key = field.substr(0, equals);
    if (key == "inner") {
      std::string shape = field.substr(equals + 1);
      std::replace(shape.begin(), shape.end(), ':', ' ');
      std::istringstream parts(shape);
      bpf::MapSpec inner;
      std::string inner_type;
      if (!(parts >> inner_type >> inner.key_size >> inner.value_size >> inner.max_entries)) {
        return make_error(EINVAL, "map: bad inner map " + field);
      }
      parts >> std::setbase(0) >> inner.map_flags;
      const auto inner_known = map_types().find(inner_type);
      if (inner_known == map_types().end()) {
        return make_error(EINVAL, "map: unknown inner type " + inner_type);
      }
      inner.type = inner_known->second;
      inner.name = spec.name + ".inner";
      spec.inner_map.assign(1, inner);
      continue;
    }
    std::uint32_t value = 0;
    try {
      value = static_cast<std::uint32_t>(std::stoul(field.substr(equals + 1), nullptr, 0));
    } catch (const std::exception&) {
      return make_error(EINVAL, "map: bad number in " + field);
    }
    if (key == "key") {
      spec.key_size = value;
    } else if (key == "value") {
      spec.value_size = value;
    } else if (key == "entries") {
      spec.max_entries = value;
    } else if (key == "flags") {
      spec.map_flags = value;
    } else {
      return make_error(EINVAL, "map: unknown field " + key);
    }
  }
  return spec;
}

// libbpf reports through a global print callback: collect what one load prints.
std::string* libbpf_messages = nullptr;

int collect_libbpf_message(libbpf_print_level level, const char* format, va_list args) {
  if (libbpf_messages == nullptr || level == LIBBPF_DEBUG) return 0;
  char buffer[4096];
  const int length = std::vsnprintf(buffer, sizeof buffer, format, args);
  if (length > 0) libbpf_messages->append(buffer, std::min<std::size_t>(length, sizeof buffer - 1));
  return length;
}

KernelOutcome outcome_of(int error, std::string log) {
  KernelOutcome outcome;
  outcome.log = std::move(log);
  if (error == 0) {
    outcome.verdict.accepted = true;
  } else if (kernel_bpf::kernel_refuses_bpf(error)) {
    outcome.status = KernelOutcome::Status::kUnavailable;
    outcome.verdict.error = error;
  } else {
    outcome.verdict.error = error;
  }
  return outcome;
}

KernelOutcome kernel_load_assembly(const CorpusEntry& entry) {
  auto image = assembly_image(entry);
  if (!image) {
    KernelOutcome broken;
    broken.status = KernelOutcome::Status::kBroken;
    broken.log = image.error().message;
    return broken;
  }
  const kernel_bpf::LoadedProgram loaded =
      kernel_bpf::load_image_program(*image, 0, BPF_PROG_TYPE_PERF_EVENT);
  if (loaded.error != 0 && !loaded.log.starts_with("prog_load")) {
    // A map the kernel would not create is a corpus bug, not a verifier verdict.
    KernelOutcome broken;
    broken.status = kernel_bpf::kernel_refuses_bpf(loaded.error)
                        ? KernelOutcome::Status::kUnavailable
                        : KernelOutcome::Status::kBroken;
    broken.log = loaded.log;
    return broken;
  }
  return outcome_of(loaded.error, loaded.log);
}

KernelOutcome kernel_load_c(const CorpusEntry& entry) {
  std::string messages;
  libbpf_messages = &messages;
  const libbpf_print_fn_t previous = libbpf_set_print(collect_libbpf_message);
  bpf_object* object = bpf_object__open_file(c_object_path(entry).c_str(), nullptr);
  int error = 0;
  KernelOutcome outcome;
  if (object == nullptr) {
    outcome.status = KernelOutcome::Status::kBroken;
    outcome.log = "bpf_object__open_file: " + std::string(std::strerror(errno)) + "\n" + messages;
  } else {
    bpf_program* program = nullptr;
    bpf_object__for_each_program(program, object) {
      bpf_program__set_type(program, BPF_PROG_TYPE_PERF_EVENT);
    }
    error = -bpf_object__load(object);
    bpf_object__close(object);
    outcome = outcome_of(error, messages);
  }
  libbpf_set_print(previous);
  libbpf_messages = nullptr;
  return outcome;
}

}  // namespace

std::string format_verdict(const Verdict& verdict) {
  if (verdict.accepted) return "accept";
  if (verdict.error == kEnotsupp) return "reject ENOTSUPP";
  const char* name = strerrorname_np(verdict.error);
  return std::string("reject ") + (name != nullptr ? name : std::to_string(verdict.error));
}

std::optional<Verdict> parse_verdict(std::string_view text) {
  text = trim(text);
  if (text == "accept") return Verdict{true, 0};
  if (!text.starts_with("reject ")) return std::nullopt;
  const int error = errno_from_name(trim(text.substr(7)));
  if (error == 0) return std::nullopt;
  return Verdict{false, error};
}

std::vector<CorpusEntry> list_corpus() {
  std::vector<CorpusEntry> entries;
  for (const auto& file : std::filesystem::directory_iterator(corpus_dir())) {
    const std::string filename = file.path().filename().string();
    CorpusEntry entry;
    if (filename.ends_with(".asm")) {
      entry.kind = SourceKind::kAssembly;
      entry.name = filename.substr(0, filename.size() - 4);
    } else if (filename.ends_with(".bpf.c")) {
      entry.kind = SourceKind::kC;
      entry.name = filename.substr(0, filename.size() - 6);
    } else {
      continue;
    }
    entry.path = file.path().string();
    bool has_expect = false;
    for (const auto& [key, value] : directives(read_text(entry.path), comment_of(entry.kind))) {
      if (key == "expect") {
        has_expect = true;
        if (value != "?") {
          entry.expect = parse_verdict(value);
          if (!entry.expect) throw std::runtime_error(entry.path + ": bad expect: " + value);
        }
      } else if (key == "why") {
        entry.why = value;
      }
    }
    if (!has_expect) throw std::runtime_error(entry.path + ": no expect: line");
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(),
            [](const CorpusEntry& a, const CorpusEntry& b) { return a.name < b.name; });
  return entries;
}

Expected<bpf::ObjectImage> assembly_image(const CorpusEntry& entry) {
  const std::string text = read_text(entry.path);
  bpf::ObjectImage image;
  for (const auto& [key, value] : directives(text, "#")) {
    if (key == "license") {
      image.license = value;
    } else if (key == "map") {
      auto spec = parse_map(value);
      if (!spec) return make_error(EINVAL, entry.path + ": " + spec.error().message);
      image.maps.push_back(std::move(*spec));
    }
  }
  bpf::AssembleOptions options;
  options.map_index = [&image](std::string_view name) -> std::optional<std::uint32_t> {
    for (std::size_t i = 0; i < image.maps.size(); ++i) {
      if (image.maps[i].name == name) return static_cast<std::uint32_t>(i);
    }
    return std::nullopt;
  };
  auto insns = bpf::assemble(text, options);
  if (!insns) return make_error(EINVAL, entry.path + ": " + insns.error().message);
  bpf::ProgramImage program;
  program.name = "corpus_prog";
  program.section = "perf_event";
  program.prog_type = BPF_PROG_TYPE_PERF_EVENT;
  program.insns = std::move(*insns);
  image.programs.push_back(std::move(program));
  return image;
}

std::string c_object_path(const CorpusEntry& entry) {
  return std::string(USERPERF_BPF_OBJECT_DIR) + "/corpus/" + entry.name + ".bpf.o";
}

KernelOutcome kernel_load(const CorpusEntry& entry) {
  return entry.kind == SourceKind::kAssembly ? kernel_load_assembly(entry) : kernel_load_c(entry);
}

void record_expectation(const CorpusEntry& entry, const Verdict& verdict) {
  const std::string text = read_text(entry.path);
  const std::string prefix = std::string(comment_of(entry.kind)) + " expect:";
  std::istringstream lines(text);
  std::string line;
  std::string updated;
  while (std::getline(lines, line)) {
    if (trim(line).starts_with(prefix)) line = prefix + " " + format_verdict(verdict);
    updated += line + "\n";
  }
  std::ofstream out(entry.path, std::ios::trunc);
  out << updated;
  if (!out) throw std::runtime_error("cannot write " + entry.path);
}

}  // namespace userperf::conformance::verifier_corpus
