// The maps every bpf_insns input runs with (its lddw map:N references index this list), named as
// the verifier corpus names its maps so that its programs keep their meaning as seeds.
#pragma once

#include <linux/bpf.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "bpf/isa/insn.hpp"
#include "bpf/isa/program_image.hpp"

namespace userperf::fuzz {

inline std::vector<bpf::MapSpec> bpf_insns_maps() {
  std::vector<bpf::MapSpec> maps;
  auto add = [&](const char* name, std::uint32_t type, std::uint32_t key, std::uint32_t value,
                 std::uint32_t entries) -> bpf::MapSpec& {
    bpf::MapSpec m;
    m.name = name;
    m.type = type;
    m.key_size = key;
    m.value_size = value;
    m.max_entries = entries;
    maps.push_back(m);
    return maps.back();
  };
  add("counts", BPF_MAP_TYPE_HASH, 4, 8, 16);
  add("vals", BPF_MAP_TYPE_ARRAY, 4, 64, 4);
  add("rb", BPF_MAP_TYPE_RINGBUF, 0, 0, 4096);
  add("progs", BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4);
  add("cgroups", BPF_MAP_TYPE_CGROUP_ARRAY, 4, 4, 4);
  add("cfg", BPF_MAP_TYPE_ARRAY, 4, 16, 1);
  add("events", BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 8);
  add("small", BPF_MAP_TYPE_ARRAY, 4, 8, 4);
  bpf::MapSpec inner;
  inner.type = BPF_MAP_TYPE_ARRAY;
  inner.key_size = 4;
  inner.value_size = 16;
  inner.max_entries = 8;
  bpf::set_inner_map_template(add("outer", BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 4), inner);
  add("stacks", BPF_MAP_TYPE_STACK_TRACE, 4, 160, 16);
  add("ro", BPF_MAP_TYPE_ARRAY, 4, 16, 1).map_flags = BPF_F_RDONLY_PROG;
  add("pcpu", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 2);
  add("wide", BPF_MAP_TYPE_HASH, 8, 8, 16);
  add("four", BPF_MAP_TYPE_ARRAY, 4, 8, 4);
  add("lru", BPF_MAP_TYPE_LRU_HASH, 4, 8, 4);
  add("pcpu_hash", BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 8);
  bpf::MapSpec& data = add(".data", BPF_MAP_TYPE_ARRAY, 4, 32, 1);
  data.global_data = true;
  data.initial_value.assign(32, 0);
  for (std::uint8_t i = 0; i < 32; ++i) data.initial_value[i] = i;
  return maps;
}

// The index of the map called `name`.
inline std::optional<std::uint32_t> bpf_insns_map_index(std::string_view name) {
  static const std::vector<bpf::MapSpec> maps = bpf_insns_maps();
  for (std::size_t i = 0; i < maps.size(); ++i) {
    if (maps[i].name == name) return static_cast<std::uint32_t>(i);
  }
  return std::nullopt;
}

// The maps `insns` name (lddw map:N, as the loader pairs lddw halves), in the order of the list
// above, each reference renumbered to its place: creating and destroying all of them for every
// input was a quarter of the target's time. An index outside the list stays outside the new one.
inline std::vector<bpf::MapSpec> maps_named_by(std::vector<bpf::Insn>& insns) {
  static const std::vector<bpf::MapSpec> all = bpf_insns_maps();
  std::vector<bool> named(all.size(), false);
  const auto for_each_reference = [&insns](auto&& fn) {
    for (std::size_t i = 0; i + 1 < insns.size(); ++i) {
      if (!bpf::is_lddw(insns[i])) continue;
      const std::uint8_t kind = insns[i].src_reg;
      if ((kind == BPF_PSEUDO_MAP_IDX || kind == BPF_PSEUDO_MAP_IDX_VALUE) && insns[i].imm >= 0 &&
          static_cast<std::size_t>(insns[i].imm) < all.size()) {
        fn(insns[i].imm);
      }
      ++i;  // the second half of the pair
    }
  };
  for_each_reference([&](std::int32_t& index) { named[static_cast<std::size_t>(index)] = true; });
  std::vector<std::int32_t> place(all.size(), 0);
  std::vector<bpf::MapSpec> maps;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!named[i]) continue;
    place[i] = static_cast<std::int32_t>(maps.size());
    maps.push_back(all[i]);
  }
  for_each_reference([&](std::int32_t& index) { index = place[static_cast<std::size_t>(index)]; });
  return maps;
}

// An input: this header (the sample's ip, addr and period), then the instructions.
struct BpfInsnsHeader {
  std::uint64_t ip;
  std::uint64_t addr;
  std::uint64_t period;
};

}  // namespace userperf::fuzz
