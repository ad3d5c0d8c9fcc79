#include "bpf/loader/elf_loader.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bpf/loader/btf_check.hpp"
#include "bpf/loader/btf_funcs.hpp"
#include "bpf/loader/core_apply.hpp"
#include "bpf/loader/core_relocations.hpp"
#include "bpf/loader/elf_check.hpp"
#include "bpf/loader/elf_view.hpp"
#include "bpf/loader/global_data.hpp"
#include "bpf/loader/kernel_btf_types.hpp"
#include "bpf/loader/kernel_task_layout.hpp"
#include "bpf/loader/libbpf_view.hpp"
#include "bpf/loader/map_slots.hpp"
#include "bpf/loader/program_linker.hpp"
#include "bpf/loader/untrusted_bytes.hpp"

namespace userperf::bpf {
namespace {

using loader::ElfSection;
using loader::ElfView;

// An array map's value may not exceed the kernel's KMALLOC_MAX_SIZE (4 MiB on x86-64): larger
// global data would be refused at map creation, so refuse it here before allocating it.
constexpr std::uint64_t kMaxGlobalDataSize = std::uint64_t{4} << 20;

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// libbpf's object name: the file name up to its first '.'.
std::string object_name(const std::string& name) {
  const std::string base = base_name(name);
  return base.substr(0, base.find('.'));
}

// The "license" section up to its first NUL.
std::string read_license(const ElfView& elf) {
  const ElfSection* section = elf.find("license");
  if (section == nullptr) return "";
  const auto& bytes = section->bytes;
  return std::string(bytes.begin(), std::find(bytes.begin(), bytes.end(), 0));
}

Expected<std::uint32_t> read_version(const ElfView& elf) {
  const ElfSection* section = elf.find("version");
  if (section == nullptr) return std::uint32_t{0};
  if (section->bytes.size() != sizeof(std::uint32_t)) {
    return make_error(EINVAL, "section 'version' is not 4 bytes");
  }
  return loader::read_at<std::uint32_t>(section->bytes, 0);
}

// BTF maps (libbpf's order) located by their symbols in .maps, then one map per data section.
Expected<loader::MapLayout> collect_maps(const ElfView& elf, const loader::LibbpfObject& parsed,
                                         const std::string& obj_name, ObjectImage& image) {
  loader::MapLayout layout;
  if (const ElfSection* maps = elf.find(".maps")) layout.maps_section = maps->index;
  for (const MapSpec& spec : parsed.btf_maps) {
    const auto& symbols = elf.symbols();
    const auto symbol = std::find_if(symbols.begin(), symbols.end(), [&](const auto& s) {
      return s.name == spec.name && s.section == layout.maps_section && s.type != STT_SECTION;
    });
    if (layout.maps_section == 0 || symbol == symbols.end()) {
      return make_error(EINVAL, "map '" + spec.name + "' has no symbol in section '.maps'");
    }
    layout.btf_map_at[symbol->value] = static_cast<std::uint32_t>(image.maps.size());
    image.maps.push_back(spec);
  }
  for (const ElfSection& section : elf.sections()) {
    if (section.index == 0 || !loader::is_global_data_section(section)) continue;
    if (section.size > kMaxGlobalDataSize) {
      return make_error(E2BIG, "section '" + section.name + "' is too large for a map value");
    }
    layout.data_map_of[section.index] = static_cast<std::uint32_t>(image.maps.size());
    image.maps.push_back(loader::global_data_map(section, obj_name));
  }
  return layout;
}

// Where a CO-RE relocation is and what it asks, for errors: "program 'read_pid' (section
// 'perf_event') instruction 0: CO-RE relocation 'byte_off' (field byte offset) of struct
// task_struct, access 0:0".
std::string describe(const ElfView& elf, const loader::CoreRelocation& relo,
                     const loader::ProgramLinker& linker, const loader::LibbpfObject& parsed) {
  const std::uint64_t insn = relo.insn_off / sizeof(Insn);
  // The function holding the instruction: a program, or a subprogram programs call.
  std::string where = "section '" + relo.section + "' instruction " + std::to_string(insn);
  for (const loader::FunctionRange& f : linker.functions()) {
    if (elf.sections()[f.section].name != relo.section || insn < f.first ||
        insn >= f.first + f.count) {
      continue;
    }
    const bool is_program =
        std::any_of(parsed.programs.begin(), parsed.programs.end(),
                    [&](const auto& p) { return p.name == f.name && p.section == relo.section; });
    where = std::string(is_program ? "program '" : "subprogram '") + f.name + "' (section '" +
            relo.section + "') instruction " + std::to_string(insn - f.first);
    break;
  }
  return where + ": CO-RE relocation '" + loader::core_relo_kind_name(relo.kind) + "' (" +
         loader::core_relo_kind_description(relo.kind) + ") of " +
         loader::local_type_name(elf, relo.type_id) + ", access " + relo.access;
}

// What objects take from the running kernel's BTF, derived once per process when an object first
// needs it: parsing the BTF takes tens of milliseconds, and reading the struct types a BTF-typed
// pointer reaches (task_struct's, thousands) took most of a bpf_find_vma object's load.
std::mutex kernel_mutex;  // guards the three caches below

Expected<std::shared_ptr<const loader::BtfHandle>> kernel_btf_locked() {
  static std::shared_ptr<const loader::BtfHandle> cached;
  if (cached == nullptr) {
    auto loaded = loader::BtfHandle::kernel();
    if (!loaded) return loaded.error();
    cached = *loaded;
  }
  return cached;
}

Expected<std::shared_ptr<const loader::BtfHandle>> kernel_btf() {
  std::lock_guard lock(kernel_mutex);
  return kernel_btf_locked();
}

// A value derived from the kernel's BTF, its result (a value or its error) kept. A kernel without
// BTF is asked again next time (that failure is cheap).
template <typename T>
Expected<T> derived_from_kernel_btf(std::optional<Expected<T>>& cache,
                                    Expected<T> (*derive)(const loader::BtfHandle&)) {
  std::lock_guard lock(kernel_mutex);
  if (!cache) {
    auto kernel = kernel_btf_locked();
    if (!kernel) return kernel.error();
    cache = derive(**kernel);
  }
  return *cache;
}

Expected<KernelTaskLayout> kernel_task_layout() {
  static std::optional<Expected<KernelTaskLayout>> cached;
  return derived_from_kernel_btf(cached, &loader::read_kernel_task_layout);
}

Expected<std::shared_ptr<const KernelBtfTypes>> kernel_btf_types() {
  static std::optional<Expected<std::shared_ptr<const KernelBtfTypes>>> cached;
  return derived_from_kernel_btf(
      cached,
      +[](const loader::BtfHandle& kernel) -> Expected<std::shared_ptr<const KernelBtfTypes>> {
        auto types = loader::read_kernel_btf_types(kernel);
        if (!types) return types.error();
        return std::make_shared<const KernelBtfTypes>(std::move(*types));
      });
}

// CO-RE relocations, applied as libbpf does against the kernel's BTF (core_apply.hpp): each
// instruction's placeholder (the value in the program's own declarations) becomes the kernel's.
// A kind core_apply does not handle yet refuses the whole object (EOPNOTSUPP), before anything is
// rewritten, rather than leave a placeholder to run.
std::optional<Error> apply_core_relocations(ElfView& elf,
                                            const std::vector<loader::CoreRelocation>& relocations,
                                            const loader::ProgramLinker& linker,
                                            const loader::LibbpfObject& parsed) {
  if (relocations.empty()) return std::nullopt;
  for (const loader::CoreRelocation& relo : relocations) {
    if (!loader::core_relo_kind_applied(relo.kind)) {
      return make_error(EOPNOTSUPP, describe(elf, relo, linker, parsed) +
                                        ": this CO-RE relocation kind is not applied by userperf "
                                        "yet, so the object is refused");
    }
  }
  const ElfSection* btf_section = elf.find(".BTF");
  if (btf_section == nullptr) return make_error(EINVAL, "CO-RE relocations without .BTF");
  auto local = loader::BtfHandle::from_bytes(btf_section->bytes);
  if (!local) return local.error();
  auto target = kernel_btf();
  if (!target) return target.error();
  for (const loader::CoreRelocation& relo : relocations) {
    auto value = loader::resolve_core_relocation(**local, **target, relo);
    if (!value) {
      return make_error(value.error().code,
                        describe(elf, relo, linker, parsed) + ": " + value.error().message);
    }
    loader::ElfSection* code = elf.find_mutable(relo.section);
    if (auto error = loader::patch_core_insn(code->bytes, relo, *value)) {
      return make_error(error->code, describe(elf, relo, linker, parsed) + ": " + error->message);
    }
  }
  return std::nullopt;
}

// bpf_get_current_task's synthetic task is laid out as the running kernel's task_struct: read
// from its BTF when a program calls the helper (a kernel without BTF: the object is refused).
std::optional<Error> read_task_layout(ObjectImage& image) {
  const auto calls = [](const ProgramImage& p, std::initializer_list<std::int32_t> ids) {
    return std::any_of(ids.begin(), ids.end(),
                       [&](auto id) { return program_calls_helper(p, id); });
  };
  const auto caller = std::find_if(image.programs.begin(), image.programs.end(), [&](auto& p) {
    return calls(p, {BPF_FUNC_get_current_task, BPF_FUNC_get_current_task_btf, BPF_FUNC_find_vma});
  });
  if (caller == image.programs.end()) return std::nullopt;
  const char* helper =
      program_calls_helper(*caller, BPF_FUNC_get_current_task)       ? "bpf_get_current_task"
      : program_calls_helper(*caller, BPF_FUNC_get_current_task_btf) ? "bpf_get_current_task_btf"
                                                                     : "bpf_find_vma";
  const std::string why = "program '" + caller->name + "' calls " + helper +
                          ", whose synthetic task_struct is laid out "
                          "from the running kernel's BTF: ";
  auto layout = kernel_task_layout();
  if (!layout) return make_error(layout.error().code, why + layout.error().message);
  image.task_layout = *layout;
  // BTF-typed pointers (bpf_get_current_task_btf, bpf_find_vma): the verifier walks the kernel's
  // struct types.
  const bool btf_pointers = std::any_of(image.programs.begin(), image.programs.end(), [&](auto& p) {
    return calls(p, {BPF_FUNC_get_current_task_btf, BPF_FUNC_find_vma});
  });
  if (btf_pointers) {
    auto types = kernel_btf_types();
    if (!types) return make_error(types.error().code, why + types.error().message);
    image.kernel_btf = std::move(*types);
  }
  return std::nullopt;
}

Expected<ObjectImage> load_checked(std::span<const std::uint8_t> bytes, const std::string& name) {
  if (auto error = loader::check_elf_structure(bytes)) return *error;
  auto elf = ElfView::read(bytes);
  if (!elf) return elf.error();
  if (const ElfSection* btf = elf->find(".BTF")) {
    if (auto error = loader::check_btf(btf->bytes)) return *error;
  }
  if (auto error = loader::check_code_relocations(*elf)) return *error;
  // Before libbpf, which parses .BTF.ext at open and would word the errors its own way.
  auto core_relocations = loader::read_core_relocations(*elf);
  if (!core_relocations) return core_relocations.error();
  auto parsed = loader::open_with_libbpf(bytes, base_name(name));
  if (!parsed) return parsed.error();
  if (parsed->programs.empty()) return make_error(ENOENT, "no programs in the object");

  ObjectImage image;
  image.license = read_license(*elf);
  auto version = read_version(*elf);
  if (!version) return version.error();
  image.kern_version = *version;
  auto layout = collect_maps(*elf, *parsed, object_name(name), image);
  if (!layout) return layout.error();
  if (auto error = loader::collect_map_slots(*elf, *parsed, image)) return *error;
  auto linker = loader::ProgramLinker::create(*elf, std::move(*layout));
  if (!linker) return linker.error();
  if (auto error = apply_core_relocations(*elf, *core_relocations, *linker, *parsed)) {
    return *error;
  }
  // BTF function info (.BTF with .BTF.ext, as libbpf passes it to BPF_PROG_LOAD): each function's
  // linkage and prototype, which the verifier needs for global functions.
  const bool btf_func_info = elf->find(".BTF") != nullptr && elf->find(".BTF.ext") != nullptr;
  std::shared_ptr<const loader::BtfHandle> local_btf;
  if (btf_func_info) {
    auto btf = loader::BtfHandle::from_bytes(elf->find(".BTF")->bytes);
    if (!btf) return btf.error();
    local_btf = std::move(*btf);
  }
  for (const loader::LibbpfProgram& program : parsed->programs) {
    const auto& functions = linker->functions();
    const auto entry = std::find_if(functions.begin(), functions.end(), [&](const auto& f) {
      return f.name == program.name && elf->sections()[f.section].name == program.section;
    });
    if (entry == functions.end()) {
      return make_error(EINVAL, "program '" + program.name + "' has no function symbol");
    }
    auto linked = linker->link(*entry);
    if (!linked) return linked.error();
    std::vector<BtfFunc> btf_funcs;
    if (local_btf) btf_funcs = loader::describe_btf_funcs(*local_btf, *linked, program.prog_type);
    image.programs.push_back({program.name, program.section, program.prog_type,
                              std::move(linked->insns), btf_func_info, std::move(btf_funcs)});
  }
  if (auto error = read_task_layout(image)) return *error;
  return image;
}

}  // namespace

Expected<ObjectImage> load_elf_memory(std::span<const std::uint8_t> bytes,
                                      const std::string& name) {
  // An aligned private copy: libelf and libbpf read structures in place.
  std::vector<std::uint64_t> aligned((bytes.size() + 7) / 8);
  if (!bytes.empty()) std::memcpy(aligned.data(), bytes.data(), bytes.size());
  auto image =
      load_checked({reinterpret_cast<const std::uint8_t*>(aligned.data()), bytes.size()}, name);
  if (!image) {
    Error error = image.error();
    error.message = name + ": " + error.message;
    return error;
  }
  return image;
}

Expected<ObjectImage> load_elf_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_error(ENOENT, path + ": cannot open");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                  std::istreambuf_iterator<char>());
  if (file.bad()) return make_error(EIO, path + ": read error");
  return load_elf_memory(bytes, path);
}

}  // namespace userperf::bpf
