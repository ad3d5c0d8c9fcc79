// `userperf bpf verify PROG.o [--log-level N] [--inner-map NAME=SHAPE]...`: loads a libbpf-style
// object and runs every program through userperf's verifier as BPF_PROG_TYPE_PERF_EVENT, printing
// per program the verdict, the processed instructions, the stack depth and the verifier log.
// Programs of other types (kprobe, tracepoint, xdp, ...) are listed as skipped: userperf runs
// perf_event programs only.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bpf/loader/elf_loader.hpp"
#include "bpf/verifier/verifier.hpp"
#include "commands.hpp"

namespace userperf::cli {
namespace {

using namespace userperf::bpf;

struct VerifyCommandOptions {
  std::string object;
  std::uint32_t log_level = 1;
  std::vector<std::string> inner_maps;  // NAME=TYPE:KEY_SIZE:VALUE_SIZE:MAX_ENTRIES[:FLAGS]
};

// `--inner-map outer=array:4:8:10:0x1400`: the inner map a tool's user space gives a map-in-map
// declared without `__array(values, ...)` (libbpf's bpf_map__set_inner_map_fd before the load).
std::string set_inner_map(ObjectImage& object, const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) return "expected NAME=TYPE:KEY_SIZE:VALUE_SIZE:MAX_ENTRIES[:FLAGS]";
  const std::string name = text.substr(0, eq);
  char type[32] = {};
  unsigned key = 0, value = 0, max = 0;
  int flags = 0;
  const int n =
      std::sscanf(text.c_str() + eq + 1, "%31[a-z_]:%u:%u:%u:%i", type, &key, &value, &max, &flags);
  if (n < 4) return "expected NAME=TYPE:KEY_SIZE:VALUE_SIZE:MAX_ENTRIES[:FLAGS]";
  static const std::pair<const char*, std::uint32_t> kTypes[] = {
      {"array", BPF_MAP_TYPE_ARRAY},
      {"percpu_array", BPF_MAP_TYPE_PERCPU_ARRAY},
      {"hash", BPF_MAP_TYPE_HASH},
      {"percpu_hash", BPF_MAP_TYPE_PERCPU_HASH},
      {"lru_hash", BPF_MAP_TYPE_LRU_HASH}};
  MapSpec inner;
  for (const auto& [label, id] : kTypes) {
    if (std::strcmp(label, type) == 0) inner.type = id;
  }
  if (inner.type == BPF_MAP_TYPE_UNSPEC) return std::string("unknown map type '") + type + "'";
  inner.key_size = key;
  inner.value_size = value;
  inner.max_entries = max;
  inner.map_flags = static_cast<std::uint32_t>(flags);
  for (MapSpec& map : object.maps) {
    if (map.name != name) continue;
    if (!set_inner_map_template(map, inner)) return "map '" + name + "' is not a map-in-map";
    return "";
  }
  return "no map '" + name + "'";
}

// 0 when every perf_event program is accepted (programs of other types are skipped, and said so);
// 1 when one is rejected; 2 when the object cannot be loaded or holds no perf_event program.
int run(const VerifyCommandOptions& options) {
  Expected<ObjectImage> object = load_elf_file(options.object);
  if (!object) {
    std::fprintf(stderr, "userperf bpf verify: cannot load %s: %s (%s)\n", options.object.c_str(),
                 object.error().message.c_str(), std::strerror(object.error().code));
    return 2;
  }
  for (const std::string& inner : options.inner_maps) {
    if (const std::string error = set_inner_map(*object, inner); !error.empty()) {
      std::fprintf(stderr, "userperf bpf verify: --inner-map %s: %s\n", inner.c_str(),
                   error.c_str());
      return 2;
    }
  }
  // As libbpf's load, which cannot create an outer map without an inner map (EINVAL).
  for (const MapSpec& map : object->maps) {
    if (is_map_in_map(map.type) && inner_map_template(map) == nullptr) {
      std::fprintf(stderr,
                   "userperf bpf verify: cannot load %s: map '%s' is a map-in-map without an "
                   "inner map (no __array(values, ...)): give its shape with --inner-map "
                   "%s=TYPE:KEY_SIZE:VALUE_SIZE:MAX_ENTRIES[:FLAGS], as the tool's "
                   "bpf_map__set_inner_map_fd does (%s)\n",
                   options.object.c_str(), map.name.c_str(), map.name.c_str(),
                   std::strerror(EINVAL));
      return 2;
    }
  }
  if (object->programs.empty()) {
    std::fprintf(stderr, "userperf bpf verify: %s has no programs\n", options.object.c_str());
    return 2;
  }
  const bool gpl = license_is_gpl_compatible(object->license);
  std::printf("%s: license \"%s\" (%s), %zu map(s), %zu program(s)\n", options.object.c_str(),
              object->license.c_str(), gpl ? "GPL-compatible" : "not GPL-compatible",
              object->maps.size(), object->programs.size());
  int exit_code = 0;
  std::size_t verified = 0;
  std::size_t rejected = 0;
  std::string skipped;
  for (const ProgramImage& program : object->programs) {
    if (program.prog_type != BPF_PROG_TYPE_PERF_EVENT) {
      std::printf("\nprogram %s (section %s): not a perf_event program (type %u): skipped\n",
                  program.name.c_str(), program.section.c_str(), program.prog_type);
      skipped += (skipped.empty() ? "" : ", ") + program.name + " (" + program.section + ")";
      continue;
    }
    ++verified;
    VerifyOptions verify_options;
    verify_options.gpl_compatible = gpl;
    verify_options.maps = &object->maps;
    verify_options.log_level = options.log_level;
    verify_options.kernel_btf = object->kernel_btf.get();
    const VerifyResult result = verify(program, verify_options);
    std::printf("\nprogram %s (section %s, %zu insns): %s", program.name.c_str(),
                program.section.c_str(), program.insns.size(),
                result.accepted ? "accepted" : "rejected");
    if (!result.accepted) std::printf(" (%s)", std::strerror(result.error));
    std::printf("\n  processed %llu insns, peak states %u, stack depth %u\n",
                static_cast<unsigned long long>(result.processed_insns), result.peak_states,
                result.stack_depth);
    if (!result.log.empty()) std::printf("%s", result.log.c_str());
    if (!result.accepted) {
      ++rejected;
      exit_code = 1;
    }
  }
  std::printf("\n%zu perf_event program(s) verified: %zu accepted, %zu rejected", verified,
              verified - rejected, rejected);
  if (!skipped.empty()) std::printf("; skipped (not perf_event): %s", skipped.c_str());
  std::printf("\n");
  if (verified == 0) {
    std::fprintf(stderr, "userperf bpf verify: %s has no perf_event program\n",
                 options.object.c_str());
    return 2;
  }
  return exit_code;
}

}  // namespace

void add_bpf_verify_command(CLI::App& bpf, int& exit_code) {
  auto options = std::make_shared<VerifyCommandOptions>();
  CLI::App* cmd = bpf.add_subcommand(
      "verify",
      "verify every perf_event program of a BPF object (Linux rules); other types are skipped");
  cmd->add_option("object", options->object, "the BPF ELF object (clang -target bpf -O2)")
      ->required();
  cmd->add_option("--log-level", options->log_level,
                  "0: the reason only; 1: the failing path; 2: every instruction and state")
      ->check(CLI::Range(0, 2));
  cmd->add_option("--inner-map", options->inner_maps,
                  "NAME=TYPE:KEY_SIZE:VALUE_SIZE:MAX_ENTRIES[:FLAGS] (TYPE array, percpu_array, "
                  "hash, percpu_hash, lru_hash): the inner map of a map-in-map declared without "
                  "__array(values, ...), as a tool sets it with bpf_map__set_inner_map_fd");
  cmd->callback([options, &exit_code] { exit_code = run(*options); });
}

}  // namespace userperf::cli
