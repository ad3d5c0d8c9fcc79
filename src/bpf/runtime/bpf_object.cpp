#include "bpf/runtime/bpf_object.hpp"

#include <atomic>
#include <cstdio>
#include <string>

namespace userperf::bpf {

Expected<std::shared_ptr<BpfObject>> BpfObject::create(ObjectImage image,
                                                       std::shared_ptr<FdResolver> resolver,
                                                       std::shared_ptr<ProgResolver> programs,
                                                       std::shared_ptr<FdResolver> maps) {
  std::shared_ptr<BpfObject> object(new BpfObject());
  for (const MapSpec& spec : image.maps) {
    auto map = Map::create(spec, resolver, programs, maps);
    if (!map) {
      return make_error(map.error().code, "map '" + spec.name + "': " + map.error().message);
    }
    object->maps_.push_back(std::move(*map));
  }
  object->image_ = std::move(image);
  return object;
}

Map* BpfObject::map(std::string_view name) const {
  for (const auto& m : maps_) {
    if (m->spec().name == name) return m.get();
  }
  return nullptr;
}

namespace {

void set_lddw(Insn* lddw, std::uint64_t value) {
  lddw[0].src_reg = 0;
  lddw[0].imm = static_cast<std::int32_t>(value & 0xffffffffu);
  lddw[1].imm = static_cast<std::int32_t>(value >> 32);
}

std::atomic<std::uint32_t> next_program_id{1};

// A notice that programs wanted on the JIT run on the interpreter: once a process per `said`.
void say_once(std::atomic<bool>& said, const std::string& what) {
  if (said.exchange(true)) return;
  std::fprintf(stderr, "userperf: bpf: %s\n", what.c_str());
}
std::atomic<bool> said_unsupported{false};
std::atomic<bool> said_failed{false};

}  // namespace

Expected<bool> fix_map_references(std::vector<Insn>& insns, const BpfObject& object) {
  for (std::size_t i = 0; i + 1 < insns.size(); ++i) {
    Insn* insn = &insns[i];
    if (!is_lddw(*insn)) continue;
    const std::uint8_t kind = insn->src_reg;
    if (kind == BPF_PSEUDO_MAP_IDX || kind == BPF_PSEUDO_MAP_IDX_VALUE) {
      const auto index = static_cast<std::size_t>(insn->imm);
      if (insn->imm < 0 || index >= object.maps().size()) {
        return make_error(EINVAL,
                          "insn " + std::to_string(i) + ": no map " + std::to_string(insn->imm));
      }
      Map& map = *object.maps()[index];
      if (kind == BPF_PSEUDO_MAP_IDX) {
        set_lddw(insn, reinterpret_cast<std::uintptr_t>(&map));
      } else {
        const std::uint32_t key = 0;
        auto* value = static_cast<std::uint8_t*>(map.lookup(&key));
        const auto offset = static_cast<std::uint32_t>(insns[i + 1].imm);
        if (value == nullptr || offset >= map.spec().value_size) {
          return make_error(EINVAL, "insn " + std::to_string(i) + ": no direct value access to '" +
                                        map.spec().name + "' at " + std::to_string(offset));
        }
        set_lddw(insn, reinterpret_cast<std::uintptr_t>(value + offset));
      }
    } else if (kind != 0 && kind != BPF_PSEUDO_FUNC) {  // a callback: the interpreter's to resolve
      return make_error(EINVAL, "insn " + std::to_string(i) + ": unsupported lddw src_reg " +
                                    std::to_string(kind));
    }
    ++i;  // the second half of the pair
  }
  return true;
}

TailCallSlot tail_call_slot(std::uint64_t map, std::uint32_t index) {
  auto* m = reinterpret_cast<Map*>(static_cast<std::uintptr_t>(map));
  if (index >= m->spec().max_entries) return {};
  const auto* target = static_cast<const LoadedProgram*>(m->object_at(index));
  if (target == nullptr) return {true, nullptr, nullptr};
  return {true, &target->interpreter(), target->jit_code()};
}

Expected<std::shared_ptr<LoadedProgram>> LoadedProgram::load(std::shared_ptr<BpfObject> object,
                                                             std::size_t index,
                                                             const ProgramLoadOptions& options) {
  if (index >= object->image().programs.size()) return make_error(ENOENT, "no such program");
  const ProgramImage& image = object->image().programs[index];
  VerifyOptions verify_options;
  verify_options.prog_type = image.prog_type;
  verify_options.gpl_compatible = object->gpl_compatible();
  verify_options.maps = &object->image().maps;
  verify_options.ctx_layout = options.ctx_layout;
  verify_options.log_level = options.log_level;
  verify_options.insn_limit = options.verifier_insn_limit;
  verify_options.kernel_btf = object->image().kernel_btf.get();
  VerifyResult verdict = verify(image, verify_options);
  if (!verdict.accepted) {
    return make_error(verdict.error != 0 ? verdict.error : EACCES, verdict.log);
  }
  // The synthetic task of bpf_get_current_task is laid out from the kernel's BTF, which the
  // loader puts in the image; an image without it (built by hand, or by a loader that could not
  // read the BTF) has no task to hand out.
  if (program_calls_helper(image, BPF_FUNC_get_current_task) &&
      !object->image().task_layout.present) {
    return make_error(ENOENT, "program '" + image.name +
                                  "' calls bpf_get_current_task but its object image has no "
                                  "task_struct layout (read from /sys/kernel/btf/vmlinux at load)");
  }
  std::vector<Insn> insns = verdict.insns;
  if (auto fixed = fix_map_references(insns, *object); !fixed) return fixed.error();

  InterpreterOptions vm_options;
  vm_options.helpers = options.helpers;
  vm_options.tail_call = &tail_call_slot;
  vm_options.callback_helpers = options.callback_helpers;
  vm_options.probe_read = options.probe_read;
  for (const auto& map : object->maps()) vm_options.static_regions.push_back(map->value_region());
  const bool want_jit = options.jit && jit_allowed_by_environment();
  if (want_jit && !jit_supported() && options.say_fallback) {
    say_once(said_unsupported,
             "the eBPF JIT supports x86-64 only: programs run on the interpreter");
  }
  const bool use_jit = want_jit && jit_supported();
  JitOptions jit_options;
  if (use_jit) {
    jit_options.helpers = vm_options.helpers;
    jit_options.tail_call = vm_options.tail_call;
    jit_options.probe_read = vm_options.probe_read;
    jit_options.callback_helpers = vm_options.callback_helpers;
    jit_options.static_regions = vm_options.static_regions;
    jit_options.blind_constants = options.blind_constants;
    jit_options.function_stacks = verdict.function_stacks;  // frames of the verified sizes
  }
  auto vm = Interpreter::load(insns, std::move(vm_options));
  if (!vm) return vm.error();
  std::unique_ptr<Jit> jit;
  if (use_jit) {  // the verifier accepted `insns`: unchecked code is allowed
    auto compiled = Jit::load(insns, std::move(jit_options));
    if (compiled) {
      jit = std::move(*compiled);
    } else if (options.say_fallback) {
      // The interpreter ran the same structural checks and accepted: only the JIT failed (its
      // mmap, say). The program still runs.
      say_once(said_failed, "JIT translation of '" + image.name + "' failed (" +
                                compiled.error().message + "): it runs on the interpreter");
    }
  }

  std::shared_ptr<LoadedProgram> program(new LoadedProgram());
  program->object_ = std::move(object);
  program->index_ = index;
  program->verdict_ = std::move(verdict);
  program->vm_ = std::move(*vm);
  program->jit_ = std::move(jit);
  program->id_ = next_program_id.fetch_add(1, std::memory_order_relaxed);
  return program;
}

bool LoadedProgram::calls_helper(std::int32_t id) const {
  return program_calls_helper(image(), id);
}

}  // namespace userperf::bpf
