// Each fixture's loaded image against what its C source and clang say: programs, map specs,
// global data contents and where each map reference points, subprogram layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "bpf/isa/image_codec.hpp"
#include "bpf/loader/elf_loader.hpp"
#include "unit/bpf/loader/fixture_objects.hpp"

namespace userperf::bpf {
namespace {

using testing::fixture_path;

ObjectImage load(const std::string& fixture) {
  auto image = load_elf_file(fixture_path(fixture));
  EXPECT_TRUE(image.ok()) << (image.ok() ? "" : image.error().message);
  return image.ok() ? std::move(*image) : ObjectImage{};
}

const MapSpec* find_map(const ObjectImage& image, const std::string& name) {
  for (const MapSpec& map : image.maps) {
    if (map.name == name) return &map;
  }
  return nullptr;
}

// The raw instructions clang emitted for a program's own function (libbpf's open-time view).
std::size_t clang_insn_count(const std::string& fixture, const std::string& program) {
  auto object = testing::libbpf_open(fixture);
  if (!object) return 0;
  bpf_program* prog = bpf_object__find_program_by_name(object.get(), program.c_str());
  return prog ? bpf_program__insn_cnt(prog) : 0;
}

struct MapReference {  // an lddw with a pseudo source
  std::size_t pc;
  std::uint8_t src;
  std::int32_t map;
  std::int32_t offset;  // second imm
};

std::vector<MapReference> map_references(const ProgramImage& program) {
  std::vector<MapReference> refs;
  for (std::size_t pc = 0; pc + 1 < program.insns.size(); ++pc) {
    const Insn& insn = program.insns[pc];
    if (!is_lddw(insn)) continue;
    // src 0: a plain 64-bit constant (BPF_F_CURRENT_CPU); the libbpf cross-check makes sure no
    // map reference was left as one.
    if (insn.src_reg != 0) refs.push_back({pc, insn.src_reg, insn.imm, program.insns[pc + 1].imm});
    ++pc;
  }
  return refs;
}

bool reads_ctx_at(const ProgramImage& program, std::int16_t offset) {
  return std::any_of(program.insns.begin(), program.insns.end(), [&](const Insn& insn) {
    return insn.code == (BPF_LDX | BPF_MEM | BPF_DW) && insn.src_reg == 1 && insn.off == offset;
  });
}

TEST(LoaderFixtures, FilterPeriodIsOnePerfEventProgramWithoutMaps) {
  const ObjectImage image = load("filter_period");
  ASSERT_EQ(image.programs.size(), 1u);
  const ProgramImage& program = image.programs[0];
  EXPECT_EQ(program.name, "filter_period");
  EXPECT_EQ(program.section, "perf_event");
  EXPECT_EQ(program.prog_type, BPF_PROG_TYPE_PERF_EVENT);
  EXPECT_EQ(program.insns.size(), clang_insn_count("filter_period", "filter_period"));
  EXPECT_TRUE(image.maps.empty());
  EXPECT_EQ(image.license, "GPL");
  EXPECT_EQ(image.kern_version, 0u);  // no "version" section
  // bpf_perf_event_data on x86-64: sample_period at 168, addr at 176.
  EXPECT_TRUE(reads_ctx_at(program, 168));
  EXPECT_TRUE(reads_ctx_at(program, 176));
  EXPECT_EQ(program.insns.back().code, BPF_JMP | BPF_EXIT);
}

TEST(LoaderFixtures, MapsAllHasEveryBtfMapWithItsSpec) {
  const ObjectImage image = load("maps_all");
  ASSERT_EQ(image.maps.size(), 6u);
  struct Expected {
    const char* name;
    std::uint32_t type, key, value, max_entries, flags;
  };
  const Expected expected[] = {
      {"by_stack", BPF_MAP_TYPE_HASH, 4, 16, 1024, BPF_F_NO_PREALLOC},
      {"config", BPF_MAP_TYPE_ARRAY, 4, 8, 4, 0},
      {"per_cpu_totals", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 16, 1, 0},
      {"recent_addrs", BPF_MAP_TYPE_LRU_HASH, 8, 4, 256, 0},
      {"events", BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 0, 0},  // sized at creation
      {"stacks", BPF_MAP_TYPE_STACK_TRACE, 4, 127 * 8, 64, 0},
  };
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.name);
    const MapSpec* map = find_map(image, e.name);
    ASSERT_NE(map, nullptr);
    EXPECT_EQ(map->type, e.type);
    EXPECT_EQ(map->key_size, e.key);
    EXPECT_EQ(map->value_size, e.value);
    EXPECT_EQ(map->max_entries, e.max_entries);
    EXPECT_EQ(map->map_flags, e.flags);
    EXPECT_FALSE(map->global_data);
  }
  ASSERT_EQ(image.programs.size(), 1u);
  const ProgramImage& program = image.programs[0];
  EXPECT_EQ(program.insns.size(), clang_insn_count("maps_all", "count_stacks"));
  std::set<std::string> referenced;
  for (const MapReference& ref : map_references(program)) {
    EXPECT_EQ(ref.src, BPF_PSEUDO_MAP_IDX) << "pc " << ref.pc;
    ASSERT_GE(ref.map, 0);
    ASSERT_LT(static_cast<std::size_t>(ref.map), image.maps.size());
    EXPECT_EQ(ref.offset, 0);
    referenced.insert(image.maps[static_cast<std::size_t>(ref.map)].name);
  }
  EXPECT_EQ(referenced, (std::set<std::string>{"by_stack", "config", "per_cpu_totals",
                                               "recent_addrs", "events", "stacks"}));
}

TEST(LoaderFixtures, MapReferencesFeedTheHelperThatUsesThem) {
  // bpf_get_stackid(ctx, &stacks, ...) and bpf_perf_event_output(ctx, &events, ...) take the map
  // in r2: the last lddw into r2 before each of those helper calls must name that map.
  const ObjectImage image = load("maps_all");
  ASSERT_EQ(image.programs.size(), 1u);
  const auto& insns = image.programs[0].insns;
  std::map<int, std::string> map_for_helper;
  std::string last_r2;
  for (std::size_t pc = 0; pc < insns.size(); ++pc) {
    if (is_lddw(insns[pc]) && insns[pc].dst_reg == 2 && insns[pc].src_reg == BPF_PSEUDO_MAP_IDX) {
      last_r2 = image.maps.at(static_cast<std::size_t>(insns[pc].imm)).name;
    }
    if (insns[pc].code == (BPF_JMP | BPF_CALL) && insns[pc].src_reg == 0) {
      if (insns[pc].imm == BPF_FUNC_get_stackid || insns[pc].imm == BPF_FUNC_perf_event_output) {
        map_for_helper[insns[pc].imm] = last_r2;
      }
    }
  }
  EXPECT_EQ(map_for_helper[BPF_FUNC_get_stackid], "stacks");
  EXPECT_EQ(map_for_helper[BPF_FUNC_perf_event_output], "events");
}

std::uint64_t read_u64(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
  std::uint64_t value = 0;
  std::memcpy(&value, bytes.data() + offset, std::min<std::size_t>(8, bytes.size() - offset));
  return value;
}

TEST(LoaderFixtures, GlobalsBecomeInternalMapsAfterTheBtfMaps) {
  const ObjectImage image = load("globals");
  std::vector<std::string> names;
  for (const MapSpec& map : image.maps) names.push_back(map.name);
  EXPECT_EQ(names, (std::vector<std::string>{"drops", "globals.rodata", "globals.data",
                                             ".data.custom", "globals.bss", ".rodata.str1.1"}));
  for (const MapSpec& map : image.maps) {
    SCOPED_TRACE(map.name);
    if (map.name == "drops") {
      EXPECT_FALSE(map.global_data);
      continue;
    }
    EXPECT_TRUE(map.global_data);
    EXPECT_EQ(map.type, BPF_MAP_TYPE_ARRAY);
    EXPECT_EQ(map.key_size, 4u);
    EXPECT_EQ(map.max_entries, 1u);
    EXPECT_EQ(map.initial_value.size(), map.value_size);
    const bool read_only = map.name.find("rodata") != std::string::npos;
    EXPECT_EQ(map.map_flags, read_only ? std::uint32_t{BPF_F_RDONLY_PROG} : 0u);
  }
  const MapSpec* data = find_map(image, "globals.data");
  const MapSpec* custom = find_map(image, ".data.custom");
  const MapSpec* bss = find_map(image, "globals.bss");
  const MapSpec* str = find_map(image, ".rodata.str1.1");
  ASSERT_TRUE(data && custom && bss && str);
  EXPECT_EQ(data->value_size, 8u);
  EXPECT_EQ(read_u64(data->initial_value, 0), 7u);  // samples_seen = 7
  EXPECT_EQ(custom->value_size, 4u);
  EXPECT_EQ(read_u64(custom->initial_value, 0), 0xabcd1234u);
  EXPECT_EQ(bss->value_size, 16u);  // bytes_total, kept_count
  EXPECT_EQ(bss->initial_value, std::vector<std::uint8_t>(16, 0));
  EXPECT_EQ(std::string(str->initial_value.begin(), str->initial_value.end()),
            std::string("keep\n", 6));
}

TEST(LoaderFixtures, GlobalReferencesPointAtTheirVariables) {
  const ObjectImage image = load("globals");
  ASSERT_EQ(image.programs.size(), 1u);
  const ProgramImage& program = image.programs[0];
  EXPECT_EQ(program.insns.size(), clang_insn_count("globals", "globals_filter"));
  std::map<std::string, std::set<std::int32_t>> offsets;  // map name -> referenced offsets
  for (const MapReference& ref : map_references(program)) {
    ASSERT_GE(ref.map, 0);
    ASSERT_LT(static_cast<std::size_t>(ref.map), image.maps.size());
    const MapSpec& map = image.maps[static_cast<std::size_t>(ref.map)];
    EXPECT_EQ(ref.src, map.global_data ? int{BPF_PSEUDO_MAP_IDX_VALUE} : int{BPF_PSEUDO_MAP_IDX})
        << map.name;
    if (!map.global_data) continue;
    ASSERT_GE(ref.offset, 0);
    ASSERT_LT(static_cast<std::uint32_t>(ref.offset), map.value_size) << map.name;
    offsets[map.name].insert(ref.offset);
  }
  EXPECT_EQ(offsets["globals.data"], (std::set<std::int32_t>{0}));
  EXPECT_EQ(offsets[".data.custom"], (std::set<std::int32_t>{0}));
  EXPECT_EQ(offsets["globals.bss"], (std::set<std::int32_t>{0, 8}));
  EXPECT_EQ(offsets[".rodata.str1.1"], (std::set<std::int32_t>{0}));
  // .rodata: min_period (5000), filter_enabled (1) and bpf_printk's format, found by content.
  const MapSpec& rodata = *find_map(image, "globals.rodata");
  ASSERT_EQ(offsets["globals.rodata"].size(), 3u);
  std::set<std::string> seen;
  for (std::int32_t off : offsets["globals.rodata"]) {
    const auto at = static_cast<std::size_t>(off);
    const char* text = reinterpret_cast<const char*>(rodata.initial_value.data() + at);
    if (std::string(text, strnlen(text, rodata.value_size - at)) == "drop period %llu") {
      seen.insert("format");
    } else if (read_u64(rodata.initial_value, at) == 5000) {
      seen.insert("min_period");
    } else if ((read_u64(rodata.initial_value, at) & 0xffffffff) == 1) {
      seen.insert("filter_enabled");
    }
  }
  EXPECT_EQ(seen, (std::set<std::string>{"format", "min_period", "filter_enabled"}));
}

// pc -> target of every BPF-to-BPF call and function address in a program.
std::vector<std::pair<std::size_t, std::int64_t>> code_references(const ProgramImage& program) {
  std::vector<std::pair<std::size_t, std::int64_t>> refs;
  for (std::size_t pc = 0; pc < program.insns.size(); ++pc) {
    const Insn& insn = program.insns[pc];
    const bool call = insn.code == (BPF_JMP | BPF_CALL) && insn.src_reg == BPF_PSEUDO_CALL;
    const bool func = is_lddw(insn) && insn.src_reg == BPF_PSEUDO_FUNC;
    if (call || func) refs.emplace_back(pc, static_cast<std::int64_t>(pc) + insn.imm + 1);
  }
  return refs;
}

TEST(LoaderFixtures, SubprogramsAreAppendedOnceAndCallsLandOnTheirStart) {
  const ObjectImage image = load("subprogs");
  ASSERT_EQ(image.programs.size(), 2u);
  for (const ProgramImage& program : image.programs) {
    SCOPED_TRACE(program.name);
    EXPECT_EQ(program.prog_type, BPF_PROG_TYPE_PERF_EVENT);
    const std::size_t main_size = clang_insn_count("subprogs", program.name);
    ASSERT_GT(main_size, 0u);
    ASSERT_GT(program.insns.size(), main_size);  // subprograms follow
    const auto refs = code_references(program);
    ASSERT_FALSE(refs.empty());
    std::set<std::int64_t> starts;
    for (const auto& [pc, target] : refs) {
      ASSERT_GE(target, static_cast<std::int64_t>(main_size)) << "pc " << pc;
      ASSERT_LT(target, static_cast<std::int64_t>(program.insns.size())) << "pc " << pc;
      starts.insert(target);
    }
    // The first subprogram starts right after the main function, and every function ends with
    // exit just before the next one starts: calls land on function starts, not inside them.
    EXPECT_EQ(*starts.begin(), static_cast<std::int64_t>(main_size));
    for (std::int64_t start : starts) {
      EXPECT_EQ(program.insns[static_cast<std::size_t>(start) - 1].code, BPF_JMP | BPF_EXIT)
          << "start " << start;
    }
    EXPECT_EQ(program.insns.back().code, BPF_JMP | BPF_EXIT);
  }
  // subprog_filter: main calls mix and is_kept, mix calls scale twice (one copy of scale).
  const auto filter_refs = code_references(image.programs[0]);
  std::map<std::int64_t, int> calls_per_target;
  for (const auto& ref : filter_refs) ++calls_per_target[ref.second];
  EXPECT_EQ(calls_per_target.size(), 3u);  // mix, scale, is_kept
  EXPECT_EQ(std::count_if(calls_per_target.begin(), calls_per_target.end(),
                          [](const auto& entry) { return entry.second == 2; }),
            1);  // scale
  // subprog_addr calls scale and is_kept directly: its own copies, after its main function.
  EXPECT_EQ(code_references(image.programs[1]).size(), 2u);
}

TEST(LoaderFixtures, CallbackAddressPointsAtTheAppendedCallback) {
  const ObjectImage image = load("callback_loop");
  ASSERT_EQ(image.programs.size(), 1u);
  const ProgramImage& program = image.programs[0];
  const std::size_t main_size = clang_insn_count("callback_loop", "callback_loop");
  const auto refs = code_references(program);
  ASSERT_EQ(refs.size(), 2u);  // &add_step for bpf_loop, then the call to is_kept
  const auto& [lddw_pc, callback] = refs[0];
  EXPECT_TRUE(is_lddw(program.insns[lddw_pc]));
  EXPECT_EQ(program.insns[lddw_pc].src_reg, BPF_PSEUDO_FUNC);
  EXPECT_EQ(program.insns[lddw_pc + 1].imm, 0);
  EXPECT_EQ(callback, static_cast<std::int64_t>(main_size));  // first referenced, first placed
  EXPECT_GT(refs[1].second, callback);
  EXPECT_EQ(program.insns[static_cast<std::size_t>(refs[1].second) - 1].code, BPF_JMP | BPF_EXIT);
}

TEST(LoaderFixtures, NonGplLicenseAndVersionAreRead) {
  const ObjectImage image = load("license_mit");
  EXPECT_EQ(image.license, "MIT");
  EXPECT_FALSE(license_is_gpl_compatible(image.license));
  EXPECT_EQ(image.kern_version, 0x060100u);
  ASSERT_EQ(image.maps.size(), 1u);
  EXPECT_EQ(image.maps[0].name, "hits");
  ASSERT_EQ(image.programs.size(), 1u);
  EXPECT_EQ(image.programs[0].name, "license_mit");
}

TEST(LoaderFixtures, ProgArrayDeclaredInMapsIsAProgArraySpec) {
  const ObjectImage image = load("tail_call_walk");
  const MapSpec* jmp = find_map(image, "jmp");
  ASSERT_NE(jmp, nullptr);
  EXPECT_EQ(jmp->type, static_cast<std::uint32_t>(BPF_MAP_TYPE_PROG_ARRAY));
  EXPECT_EQ(jmp->key_size, 4u);
  EXPECT_EQ(jmp->value_size, 4u);
  EXPECT_EQ(jmp->max_entries, 4u);
  ASSERT_EQ(image.programs.size(), 2u);
  for (const ProgramImage& program : image.programs) EXPECT_TRUE(program.btf_func_info);
}

// `.values = {[1] = &target}`: the slot is read from the .maps relocation (index 1, the program's
// name), for the registry to fill at load; the image codec carries it to the agent.
TEST(LoaderFixtures, StaticallyInitialisedProgArraySlotsAreRead) {
  const ObjectImage image = load("prog_array_static_init");
  const MapSpec* jmp = nullptr;
  for (const MapSpec& m : image.maps) {
    if (m.name == "jmp") jmp = &m;
  }
  ASSERT_NE(jmp, nullptr);
  ASSERT_EQ(jmp->initial_slots.size(), 1u);
  EXPECT_EQ(jmp->initial_slots[0].index, 1u);
  EXPECT_EQ(jmp->initial_slots[0].name, "target");
  auto decoded = decode_object_image(encode_object_image(image));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  for (const MapSpec& m : decoded->maps) {
    if (m.name == "jmp") {
      EXPECT_EQ(m.initial_slots, jmp->initial_slots);
    }
  }
}

// Map-in-map: each outer map's template comes from `__array(values, struct counts_map)`, the
// ARRAY_OF_MAPS' `.values = {[0] = &counts_a}` becomes a slot naming the map; the image codec
// carries both.
TEST(LoaderFixtures, MapInMapTemplatesAndStaticSlotsAreRead) {
  const ObjectImage image = load("map_in_map");
  for (const char* name : {"by_slot", "by_addr"}) {
    const MapSpec* outer = find_map(image, name);
    ASSERT_NE(outer, nullptr) << name;
    EXPECT_EQ(outer->value_size, 4u) << name;
    const MapSpec* inner = inner_map_template(*outer);
    ASSERT_NE(inner, nullptr) << name;
    EXPECT_EQ(inner->type, static_cast<std::uint32_t>(BPF_MAP_TYPE_ARRAY));
    EXPECT_EQ(inner->key_size, 4u);
    EXPECT_EQ(inner->value_size, 8u);
    EXPECT_EQ(inner->max_entries, 4u);
  }
  const MapSpec* by_slot = find_map(image, "by_slot");
  ASSERT_EQ(by_slot->initial_slots.size(), 1u);
  EXPECT_EQ(by_slot->initial_slots[0].index, 0u);
  EXPECT_EQ(by_slot->initial_slots[0].name, "counts_a");
  EXPECT_TRUE(find_map(image, "by_addr")->initial_slots.empty());
  auto decoded = decode_object_image(encode_object_image(image));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  const MapSpec* decoded_slot = find_map(*decoded, "by_slot");
  ASSERT_NE(decoded_slot, nullptr);
  EXPECT_EQ(decoded_slot->initial_slots, by_slot->initial_slots);
  ASSERT_NE(inner_map_template(*decoded_slot), nullptr);
  EXPECT_EQ(inner_map_template(*decoded_slot)->max_entries, 4u);
  EXPECT_EQ(inner_map_template(*decoded_slot)->name, inner_map_template(*by_slot)->name);
}

TEST(LoaderFixtures, ProgramTypeComesFromTheSection) {
  const ObjectImage image = load("sections");
  ASSERT_EQ(image.programs.size(), 2u);
  EXPECT_EQ(image.programs[0].name, "xdp_pass");
  EXPECT_EQ(image.programs[0].section, "xdp");
  EXPECT_EQ(image.programs[0].prog_type, BPF_PROG_TYPE_XDP);
  EXPECT_EQ(image.programs[1].name, "on_sched_switch");
  EXPECT_EQ(image.programs[1].section, "tracepoint/sched/sched_switch");
  EXPECT_EQ(image.programs[1].prog_type, BPF_PROG_TYPE_TRACEPOINT);
  EXPECT_EQ(image.license, "Dual BSD/GPL");
}

TEST(LoaderFixtures, PerfEventSlashSectionsArePerfEventPrograms) {
  // ebpf_exporter's "perf_event/type=0,config=3,frequency=1": libbpf leaves the type unset, the
  // tool registers the prefix; "perf_events" is not the prefix and stays unknown.
  const ObjectImage image = load("perf_event_sections");
  ASSERT_EQ(image.programs.size(), 2u);
  EXPECT_EQ(image.programs[0].name, "on_cache_miss");
  EXPECT_EQ(image.programs[0].section, "perf_event/type=0,config=3,frequency=1");
  EXPECT_EQ(image.programs[0].prog_type, BPF_PROG_TYPE_PERF_EVENT);
  EXPECT_EQ(image.programs[1].name, "not_perf_event");
  EXPECT_EQ(image.programs[1].prog_type, BPF_PROG_TYPE_UNSPEC);
}

TEST(LoaderFixtures, FileAndMemoryLoadsAgree) {
  for (const std::string& fixture : testing::loadable_fixtures()) {
    SCOPED_TRACE(fixture);
    const ObjectImage from_file = load(fixture);
    const auto bytes = testing::read_fixture(fixture);
    auto from_memory = load_elf_memory(bytes, fixture + ".bpf.o");
    ASSERT_TRUE(from_memory.ok()) << from_memory.error().message;
    ASSERT_EQ(from_memory->programs.size(), from_file.programs.size());
    for (std::size_t i = 0; i < from_file.programs.size(); ++i) {
      const auto& a = from_file.programs[i].insns;
      const auto& b = from_memory->programs[i].insns;
      ASSERT_EQ(a.size(), b.size());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(Insn)), 0);
    }
    ASSERT_EQ(from_memory->maps.size(), from_file.maps.size());
    for (std::size_t i = 0; i < from_file.maps.size(); ++i) {
      EXPECT_EQ(from_memory->maps[i].name, from_file.maps[i].name);
      EXPECT_EQ(from_memory->maps[i].initial_value, from_file.maps[i].initial_value);
    }
  }
}

// Each function's BTF prototype, as the verifier reads it for global functions: linkage, an
// int/enum result, and per argument the kind btf_prepare_func_args gives it.
TEST(LoaderFixtures, FunctionPrototypesComeFromBtf) {
  auto image = load_elf_file(fixture_path("global_funcs"));
  ASSERT_TRUE(image) << image.error().message;
  ASSERT_EQ(image->programs.size(), 1u);
  const ProgramImage& program = image->programs[0];
  ASSERT_TRUE(program.btf_func_info);
  std::map<std::string, const BtfFunc*> by_name;
  for (const BtfFunc& f : program.btf_funcs) {
    ASSERT_LT(f.start, program.insns.size());
    by_name[f.name] = &f;
  }
  ASSERT_EQ(by_name.size(), 5u);
  EXPECT_EQ(by_name["global_funcs"]->start, 0u);
  EXPECT_TRUE(by_name["global_funcs"]->global);

  using Kind = BtfFuncArg::Kind;
  const BtfFunc& mixed = *by_name["mixed"];
  EXPECT_TRUE(mixed.global);
  EXPECT_TRUE(mixed.returns_scalar);
  ASSERT_EQ(mixed.args.size(), 5u);
  EXPECT_EQ(mixed.args[0].kind, Kind::kCtx);
  EXPECT_EQ(mixed.args[1].kind, Kind::kScalar);
  EXPECT_EQ(mixed.args[2].kind, Kind::kScalar);  // an enum
  EXPECT_EQ(mixed.args[3].kind, Kind::kMem);
  EXPECT_EQ(mixed.args[3].mem_size, 16u);
  EXPECT_EQ(mixed.args[4].kind, Kind::kMem);  // through const volatile
  EXPECT_EQ(mixed.args[4].mem_size, 4u);

  const BtfFunc& untyped = *by_name["untyped"];
  ASSERT_EQ(untyped.args.size(), 1u);
  EXPECT_EQ(untyped.args[0].kind, Kind::kUnsized);
  EXPECT_EQ(untyped.args[0].btf_kind, "UNKNOWN");
  EXPECT_EQ(untyped.args[0].type_name, "");
  EXPECT_EQ(untyped.args[0].size_error, -EINVAL);

  EXPECT_FALSE(by_name["no_result"]->returns_scalar);
  EXPECT_TRUE(by_name["no_result"]->global);
  EXPECT_FALSE(by_name["local_twice"]->global);
  EXPECT_TRUE(by_name["local_twice"]->returns_scalar);
}

}  // namespace
}  // namespace userperf::bpf
