// The CLI's subcommands: each registers its options on the app and runs when selected.
#pragma once

#include <CLI/CLI.hpp>

namespace userperf::cli {

// `userperf demo`: the process samples itself through the C API and prints what it saw.
void add_demo_command(CLI::App& app, int& exit_code);

}  // namespace userperf::cli
