#include "bpf/loader/map_slots.hpp"

#include <bpf/btf.h>
#include <linux/bpf.h>

#include <algorithm>

#include "bpf/loader/core_apply.hpp"

namespace userperf::bpf::loader {

namespace {

// A map's definition in the .maps section: where its variable lies and where its `values`
// member starts inside it.
struct MapVariable {
  std::string name;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::int64_t values_offset = -1;  // -1: the definition has no `values`
};

const btf_type* skip_mods_and_typedefs(const ::btf* btf, std::uint32_t id) {
  const btf_type* t = btf__type_by_id(btf, id);
  while (t != nullptr && (btf_is_mod(t) || btf_is_typedef(t))) t = btf__type_by_id(btf, t->type);
  return t;
}

// The raw .BTF leaves every .maps variable at offset 0 (libbpf's btf_fixup_datasec fills them
// in at open): each variable's offset and size come from its ELF symbol in .maps.
Expected<std::vector<MapVariable>> map_variables(const ::btf* btf, const ElfView& elf,
                                                 std::size_t maps_section) {
  const std::int32_t datasec = btf__find_by_name_kind(btf, ".maps", BTF_KIND_DATASEC);
  if (datasec < 0) return make_error(EINVAL, "relocations in .maps but no .maps in the BTF");
  const btf_type* sec = btf__type_by_id(btf, static_cast<std::uint32_t>(datasec));
  std::vector<MapVariable> out;
  const btf_var_secinfo* vars = btf_var_secinfos(sec);
  for (std::uint16_t i = 0; i < btf_vlen(sec); ++i) {
    const btf_type* var = btf__type_by_id(btf, vars[i].type);
    if (var == nullptr || !btf_is_var(var)) continue;
    MapVariable map{btf__name_by_offset(btf, var->name_off), vars[i].offset, vars[i].size, -1};
    const auto symbol = std::find_if(
        elf.symbols().begin(), elf.symbols().end(),
        [&](const ElfSymbol& sym) { return sym.section == maps_section && sym.name == map.name; });
    if (symbol == elf.symbols().end()) {
      return make_error(EINVAL, "map '" + map.name + "' has no symbol in .maps");
    }
    map.offset = symbol->value;
    if (symbol->size != 0) map.size = symbol->size;
    const btf_type* def = skip_mods_and_typedefs(btf, var->type);
    if (def != nullptr && btf_is_struct(def)) {
      const btf_member* members = btf_members(def);
      for (std::uint16_t m = 0; m < btf_vlen(def); ++m) {
        if (std::string_view(btf__name_by_offset(btf, members[m].name_off)) == "values") {
          map.values_offset = btf_member_bit_offset(def, m) / 8;
        }
      }
    }
    out.push_back(std::move(map));
  }
  return out;
}

}  // namespace

std::optional<Error> collect_map_slots(const ElfView& elf, const LibbpfObject& parsed,
                                       ObjectImage& image) {
  const ElfSection* maps = elf.find(".maps");
  if (maps == nullptr || maps->relocations.empty()) return std::nullopt;
  const ElfSection* btf_section = elf.find(".BTF");
  if (btf_section == nullptr) return make_error(EINVAL, "relocations in .maps without .BTF");
  auto btf = BtfHandle::from_bytes(btf_section->bytes);
  if (!btf) return btf.error();
  const auto maps_section = static_cast<std::size_t>(maps - elf.sections().data());
  auto variables = map_variables((*btf)->get(), elf, maps_section);
  if (!variables) return variables.error();

  for (const ElfRelocation& relo : maps->relocations) {
    const auto variable =
        std::find_if(variables->begin(), variables->end(), [&](const MapVariable& v) {
          return relo.offset >= v.offset && relo.offset < v.offset + v.size;
        });
    if (variable == variables->end() || variable->values_offset < 0 ||
        relo.offset < variable->offset + static_cast<std::uint64_t>(variable->values_offset)) {
      return make_error(EINVAL, ".maps relocation at offset " + std::to_string(relo.offset) +
                                    " is not in a map's 'values'");
    }
    const auto spec = std::find_if(image.maps.begin(), image.maps.end(),
                                   [&](const MapSpec& m) { return m.name == variable->name; });
    if (spec == image.maps.end()) {
      return make_error(EINVAL, "map '" + variable->name + "' of a .maps relocation is unknown");
    }
    const bool map_in_map = is_map_in_map(spec->type);
    if (spec->type != BPF_MAP_TYPE_PROG_ARRAY && !map_in_map) {
      return make_error(EINVAL, "map '" + spec->name + "': '.values' of a map of type " +
                                    std::to_string(spec->type) + " cannot be initialised");
    }
    // libbpf: a HASH_OF_MAPS's static slots are keyed by an int index.
    if (spec->type == BPF_MAP_TYPE_HASH_OF_MAPS && spec->key_size != sizeof(std::uint32_t)) {
      return make_error(EINVAL, "hash-map-of-maps '" + spec->name + "' should have key size 4");
    }
    const std::uint64_t slot =
        (relo.offset - variable->offset - static_cast<std::uint64_t>(variable->values_offset)) /
        sizeof(std::uint64_t);
    if (slot >= spec->max_entries) {
      return make_error(
          EINVAL, "map '" + spec->name + "' slot [" + std::to_string(slot) + "] is out of bounds");
    }
    if (relo.symbol >= elf.symbols().size()) {
      return make_error(EINVAL, "map '" + spec->name + "': relocation symbol out of range");
    }
    const ElfSymbol& symbol = elf.symbols()[relo.symbol];
    // bpf_object__collect_map_relos: a PROG_ARRAY's slot names a program, a map-in-map's slot a
    // map of the object's .maps.
    const bool named_ok =
        map_in_map ? symbol.section < elf.sections().size() &&
                         elf.sections()[symbol.section].name == ".maps" &&
                         std::any_of(image.maps.begin(), image.maps.end(),
                                     [&](const MapSpec& m) { return m.name == symbol.name; })
                   : symbol.section < elf.sections().size() &&
                         std::any_of(parsed.programs.begin(), parsed.programs.end(),
                                     [&](const LibbpfProgram& p) {
                                       return p.name == symbol.name &&
                                              elf.sections()[symbol.section].name == p.section;
                                     });
    if (!named_ok) {
      return make_error(EINVAL, "map '" + spec->name + "' slot [" + std::to_string(slot) + "]: '" +
                                    symbol.name + "' is not a " + (map_in_map ? "map" : "program") +
                                    " of the object");
    }
    spec->initial_slots.push_back({static_cast<std::uint32_t>(slot), symbol.name});
  }
  return std::nullopt;
}

}  // namespace userperf::bpf::loader
