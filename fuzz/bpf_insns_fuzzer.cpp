// Bytes -> a BpfInsnsHeader (the sample) and raw BPF instructions -> one perf_event program over a
// fixed set of maps (bpf_insns_maps.hpp; lddw map references index it) -> the verifier and the
// runtime's load -> when accepted, a run on the checked interpreter, the JIT and its leaf entry
// with the context, sample and registers in guarded pages (bpf_tiers.hpp). A verified program the
// interpreter stops (it touched memory outside every region) or that faults on a guard page is a
// verifier soundness bug; the tiers must agree on reproducible runs.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "bpf_insns_maps.hpp"
#include "bpf_tiers.hpp"

using namespace userperf;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::prepare_tier_runs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::BpfInsnsHeader header{};
  if (size < sizeof header) return 0;
  std::memcpy(&header, data, sizeof header);
  const std::size_t count = (size - sizeof header) / sizeof(bpf::Insn);
  if (count == 0) return 0;
  bpf::ProgramImage program;
  program.name = "fuzz";
  program.section = "perf_event";
  program.prog_type = BPF_PROG_TYPE_PERF_EVENT;
  program.insns.resize(count);
  std::memcpy(program.insns.data(), data + sizeof header, count * sizeof(bpf::Insn));

  bpf::ObjectImage image;
  image.license = "GPL";
  image.maps = fuzz::maps_named_by(program.insns);
  image.programs.push_back(std::move(program));
  auto object = bpf::BpfObject::create(std::move(image), std::make_shared<fuzz::NoDescriptors>(),
                                       std::make_shared<fuzz::NoDescriptors>(),
                                       std::make_shared<fuzz::NoDescriptors>());
  if (!object) {
    std::fprintf(stderr, "bpf_insns: maps: %s\n", object.error().message.c_str());
    std::abort();
  }
  static const bpf::ProgramLoadOptions options = fuzz::perf_event_load_options();
  auto loaded = bpf::LoadedProgram::load(*object, 0, options);
  if (loaded) {
    const fuzz::FuzzSample sample(header.ip, header.addr, header.period);
    fuzz::run_and_compare(**loaded, sample, fuzz::fuzz_event());
  }
  return 0;
}
