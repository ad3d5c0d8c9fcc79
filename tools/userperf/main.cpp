// userperf: the command-line front end.
#include <CLI/CLI.hpp>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"userperf: the Linux perf_event output subsystem in user space"};
  app.require_subcommand(1);
  int exit_code = 0;
  userperf::cli::add_demo_command(app, exit_code);
  userperf::cli::add_bpf_command(app, exit_code);
  userperf::cli::add_script_command(app, exit_code);
  userperf::cli::add_trace_demo_command(app, exit_code);
  userperf::cli::add_record_command(app, exit_code);
  userperf::cli::add_report_command(app, exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
