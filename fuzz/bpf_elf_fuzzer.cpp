// Bytes -> the BPF ELF loader (load_elf_memory: ELF and BTF checks, libbpf's parse, maps and
// global data, subprogram linking, CO-RE against the running kernel's BTF, parsed once a process)
// -> the object's maps -> the verifier and the runtime's load of each perf_event program, as
// `userperf bpf verify` and PERF_EVENT_IOC_SET_BPF load them -> for each accepted one, a run on
// the interpreter and on the JIT over the same maps and sample (bpf_tiers.hpp: the runs must not
// fault and must agree). A loaded image must also be sane: maps the verifier indexes exist.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "bpf/loader/elf_loader.hpp"
#include "bpf_tiers.hpp"

using namespace userperf;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::prepare_tier_runs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto image = bpf::load_elf_memory(std::span<const std::uint8_t>(data, size), "fuzz.bpf.o");
  if (!image) return 0;
  if (image->programs.empty()) {
    std::fprintf(stderr, "bpf_elf: an accepted object without programs\n");
    std::abort();
  }
  auto object = bpf::BpfObject::create(std::move(*image), std::make_shared<fuzz::NoDescriptors>(),
                                       std::make_shared<fuzz::NoDescriptors>(),
                                       std::make_shared<fuzz::NoDescriptors>());
  if (!object) return 0;
  const bpf::ProgramLoadOptions options = fuzz::perf_event_load_options();
  const fuzz::FuzzSample sample(0x401000, 0x2000, 1000);
  for (std::size_t i = 0; i < (*object)->image().programs.size(); ++i) {
    if ((*object)->image().programs[i].prog_type != BPF_PROG_TYPE_PERF_EVENT) continue;
    auto program = bpf::LoadedProgram::load(*object, i, options);
    if (!program) continue;
    fuzz::run_and_compare(**program, sample, fuzz::fuzz_event());
  }
  return 0;
}
