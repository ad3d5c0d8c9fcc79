// Kernel helper names <-> ids (enum bpf_func_id of <linux/bpf.h>), for `call NAME`.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace userperf::bpf {

// "map_lookup_elem" or "bpf_map_lookup_elem" -> BPF_FUNC_map_lookup_elem.
std::optional<std::int32_t> helper_id(std::string_view name);
// BPF_FUNC_map_lookup_elem -> "bpf_map_lookup_elem"; nullptr for an unknown id.
const char* helper_name(std::int32_t id);

}  // namespace userperf::bpf
