// `userperf bpf`: groups the eBPF runtime's subcommands.
#include "commands.hpp"

namespace userperf::cli {

void add_bpf_command(CLI::App& app, int& exit_code) {
  CLI::App* bpf = app.add_subcommand("bpf", "eBPF runtime: conformance suite, verifier");
  bpf->require_subcommand(1);
  add_bpf_conformance_command(*bpf, exit_code);
  add_bpf_verify_command(*bpf, exit_code);
}

}  // namespace userperf::cli
