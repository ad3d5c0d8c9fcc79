// Verifier time over the differential corpus (tests/data/bpf/verifier_corpus): userperf's
// verify() on every assembly program, against the running kernel's BPF_PROG_LOAD of the same
// programs in the same run (map creation included there; skipped when bpf() is refused). The two
// 1M-instruction loops (172, 174) are measured apart: they dominate any total.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bpf/verifier/verifier.hpp"
#include "conformance/bpf_verifier_corpus_support.hpp"

namespace userperf::bench {
namespace {

namespace corpus = conformance::verifier_corpus;

struct Program {
  corpus::CorpusEntry entry;
  bpf::ObjectImage image;
};

bool is_long_loop(const std::string& name) {
  return name.rfind("172_", 0) == 0 || name.rfind("174_", 0) == 0;
}

const std::vector<Program>& programs(bool long_loops) {
  static const auto load = [](bool want_long) {
    std::vector<Program> out;
    for (const corpus::CorpusEntry& entry : corpus::list_corpus()) {
      if (entry.kind != corpus::SourceKind::kAssembly || is_long_loop(entry.name) != want_long) {
        continue;
      }
      auto image = corpus::assembly_image(entry);
      if (image) out.push_back({entry, std::move(*image)});
    }
    return out;
  };
  static const std::vector<Program> regular = load(false);
  static const std::vector<Program> long_ones = load(true);
  return long_loops ? long_ones : regular;
}

void BM_Verify_Userperf(benchmark::State& state) {
  const auto& set = programs(state.range(0) != 0);
  std::uint64_t processed = 0;
  for (auto _ : state) {
    for (const Program& p : set) {
      bpf::VerifyOptions options;
      options.gpl_compatible = bpf::license_is_gpl_compatible(p.image.license);
      options.maps = &p.image.maps;
      options.log_level = 0;
      const bpf::VerifyResult result = bpf::verify(p.image.programs[0], options);
      processed += result.processed_insns;
      benchmark::DoNotOptimize(result.accepted);
    }
  }
  state.counters["programs"] = static_cast<double>(set.size());
  state.counters["insns_per_pass"] =
      static_cast<double>(processed) / static_cast<double>(state.iterations());
}

void BM_Verify_Kernel(benchmark::State& state) {
  const auto& set = programs(state.range(0) != 0);
  for (auto _ : state) {
    for (const Program& p : set) {
      const corpus::KernelOutcome outcome = corpus::kernel_load(p.entry);
      if (outcome.status == corpus::KernelOutcome::Status::kUnavailable) {
        state.SkipWithError("bpf() refused here: no kernel baseline");
        return;
      }
    }
  }
  state.counters["programs"] = static_cast<double>(set.size());
}

// Arg 0: the corpus without the two long loops; arg 1: the two long loops.
BENCHMARK(BM_Verify_Userperf)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Verify_Kernel)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace userperf::bench

BENCHMARK_MAIN();
