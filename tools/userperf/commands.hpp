// The CLI's subcommands: each registers its options on the app and runs when selected.
#pragma once

#include <CLI/CLI.hpp>

namespace userperf::cli {

// `userperf demo`: the process samples itself through the C API and prints what it saw.
void add_demo_command(CLI::App& app, int& exit_code);

// `userperf trace-demo -o FILE`: samples carrying this thread's newest calls (AUX sampling of a
// calltrace flight recorder), written to a perf.data file.
void add_trace_demo_command(CLI::App& app, int& exit_code);

// `userperf script -i FILE`: prints every record of a perf.data file, one line each, decoding
// AUX samples with their PMU's trace decoder; exit 1 with the offset on a malformed file.
void add_script_command(CLI::App& app, int& exit_code);

// `userperf record [options] -- COMMAND`: runs the command with the agent preloaded and writes its
// threads' samples to perf.data; exits with the command's status (128 + signal when killed).
void add_record_command(CLI::App& app, int& exit_code);

// `userperf report [-i FILE] [--stdio]`: the file's samples as top-symbol tables (children and
// self shares, per event); exit 1 with the offset on a malformed file.
void add_report_command(CLI::App& app, int& exit_code);

// `userperf bpf ...`: the eBPF runtime's tools.
void add_bpf_command(CLI::App& app, int& exit_code);
// `userperf bpf conformance [DIR]`: runs the bpf_conformance suite's .data files on the
// interpreter and ends with "N passed, N failed".
void add_bpf_conformance_command(CLI::App& bpf, int& exit_code);
// `userperf bpf verify PROG.o`: verifies every program of an object as BPF_PROG_TYPE_PERF_EVENT
// and prints the verdict and the verifier log; exits 0 only when all are accepted.
void add_bpf_verify_command(CLI::App& bpf, int& exit_code);

}  // namespace userperf::cli
