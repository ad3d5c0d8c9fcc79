#include "bpf/isa/helper_names.hpp"

#include <linux/bpf.h>

#include <array>

namespace userperf::bpf {

namespace {

// One "bpf_<name>" string per id, generated from the header's own comma-separated list (one or more
// arguments, depending on the header's version).
#define USERPERF_HELPER_NAME(name, ...) "bpf_" #name
constexpr const char* kHelperNames[] = {__BPF_FUNC_MAPPER(USERPERF_HELPER_NAME)};
#undef USERPERF_HELPER_NAME
constexpr std::int32_t kHelperCount = sizeof(kHelperNames) / sizeof(kHelperNames[0]);
static_assert(kHelperCount == __BPF_FUNC_MAX_ID);

}  // namespace

std::optional<std::int32_t> helper_id(std::string_view name) {
  if (name.starts_with("bpf_")) name.remove_prefix(4);
  if (name.empty() || name == "unspec") return std::nullopt;
  for (std::int32_t id = 1; id < kHelperCount; ++id) {
    if (std::string_view(kHelperNames[id]).substr(4) == name) return id;
  }
  return std::nullopt;
}

const char* helper_name(std::int32_t id) {
  if (id <= 0 || id >= kHelperCount) return nullptr;
  return kHelperNames[id];
}

}  // namespace userperf::bpf
