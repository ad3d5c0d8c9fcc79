// BpfObject: an object file's maps, created once and shared by its programs. LoadedProgram: one
// verified program with its map references fixed up and compiled — what runs: x86-64 code from
// the JIT by default, the interpreter when the JIT is turned off, fails or the machine is not
// x86-64.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "bpf/isa/program_image.hpp"
#include "bpf/jit/jit.hpp"
#include "bpf/maps/map.hpp"
#include "bpf/verifier/verifier.hpp"
#include "bpf/vm/interpreter.hpp"
#include "support/expected.hpp"

namespace userperf::bpf {

class BpfObject {
 public:
  // Creates every map of the image (global data holds its initial bytes). `resolver` turns the
  // descriptors stored in PERF_EVENT_ARRAY maps into objects, `programs` those stored in
  // PROG_ARRAY maps into programs: its objects must be `LoadedProgram`s (tail_call_slot), `maps`
  // those stored in ARRAY_OF_MAPS / HASH_OF_MAPS into `Map*`s.
  static Expected<std::shared_ptr<BpfObject>> create(
      ObjectImage image, std::shared_ptr<FdResolver> resolver,
      std::shared_ptr<ProgResolver> programs = nullptr, std::shared_ptr<FdResolver> maps = nullptr);

  const ObjectImage& image() const { return image_; }
  bool gpl_compatible() const { return license_is_gpl_compatible(image_.license); }
  Map* map(std::string_view name) const;  // nullptr when the object has no such map
  const std::vector<std::unique_ptr<Map>>& maps() const { return maps_; }

 private:
  BpfObject() = default;
  ObjectImage image_;
  std::vector<std::unique_ptr<Map>> maps_;
};

struct ProgramLoadOptions {
  std::vector<HelperFn> helpers;  // by helper id: every helper the program type allows
  const PerfEventCtxLayout* ctx_layout = nullptr;
  // Callback-calling helpers besides bpf_loop (bpf_find_vma) and the probe loads' read: the
  // program type's (perf/find_vma.hpp).
  std::vector<std::pair<std::int32_t, const CallbackDriver*>> callback_helpers;
  ProbeRead probe_read = nullptr;
  std::uint32_t log_level = 1;
  std::uint64_t verifier_insn_limit = 1000000;  // VerifyOptions::insn_limit
  // The tier: the JIT (x86-64) unless false or the environment sets USERPERF_BPF_JIT=0; the
  // interpreter otherwise (`--no-bpf-jit`).
  bool jit = true;
  // Constant blinding of the JIT's code (JitOptions::blind_constants). On by default: every
  // program the runtime loads comes from an object file (ELF or a recorder's image of one)
  // whose author userperf cannot vouch for, and it runs inside the recorded process.
  bool blind_constants = true;
  // Say on stderr (once a process) when the program runs on the interpreter although the JIT
  // was wanted: JIT translation failed, or the machine is not x86-64. False where someone else
  // already said it for the same object (the agent, after the recorder loaded it).
  bool say_fallback = true;
};

class LoadedProgram {
 public:
  // Verifies program `index` of the object (rejected: an Error with the verifier's errno and its
  // log), fixes up map references (lddw of a map -> the Map's address, of a map value -> the
  // value's address) and prepares the interpreter with the maps' storage as static regions, and
  // the JIT's unchecked code (options.jit, above), which run() prefers.
  static Expected<std::shared_ptr<LoadedProgram>> load(std::shared_ptr<BpfObject> object,
                                                       std::size_t index,
                                                       const ProgramLoadOptions& options);

  // SIGNAL-SAFE. r1 = ctx; `regions` are the memory the ctx lets the program reach. A program
  // that calls bpf_tail_call or has callbacks (bpf_loop) runs on the interpreter (the JIT has
  // neither yet).
  RunResult run(const void* ctx, std::span<const MemoryRegion> regions, void* env) const {
    if (jit_) return jit_->run(reinterpret_cast<std::uintptr_t>(ctx), 0, regions, env);
    return vm_->run(reinterpret_cast<std::uintptr_t>(ctx), 0, regions, env);
  }

  const ProgramImage& image() const { return object_->image().programs[index_]; }
  const std::shared_ptr<BpfObject>& object() const { return object_; }
  const VerifyResult& verdict() const { return verdict_; }
  bool calls_helper(std::int32_t id) const;
  // What a tail call to this program runs.
  const Interpreter& interpreter() const { return *vm_; }
  // A process-unique id (the kernel's prog->aux->id: what a PROG_ARRAY lookup returns).
  std::uint32_t id() const { return id_; }
  bool jitted() const { return jit_ != nullptr; }     // run() runs x86-64 code
  const Jit* jit_code() const { return jit_.get(); }  // nullptr: not jitted

 private:
  LoadedProgram() = default;
  std::shared_ptr<BpfObject> object_;
  std::size_t index_ = 0;
  VerifyResult verdict_;
  std::unique_ptr<Interpreter> vm_;
  // The verified program as unchecked x86-64 code (ProgramLoadOptions::jit): run() prefers it.
  std::unique_ptr<Jit> jit_;
  std::uint32_t id_ = 0;
};

// The kernel's resolve_pseudo_ldimm64 after verification, as LoadedProgram::load applies it: lddw
// of a map becomes the Map's address, of a map value the value's address (`insns` verified).
Expected<bool> fix_map_references(std::vector<Insn>& insns, const BpfObject& object);

// The interpreter's TailCallResolver over userperf's maps: `map` is a PROG_ARRAY's Map* (the
// fixed-up lddw), its objects LoadedProgram*. SIGNAL-SAFE.
TailCallSlot tail_call_slot(std::uint64_t map, std::uint32_t index);

}  // namespace userperf::bpf
