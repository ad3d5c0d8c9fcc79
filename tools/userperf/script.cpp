// `userperf script -i FILE`: every record of a perf.data file, one line each
// (report/script_printer).
#include <cstdio>

#include "commands.hpp"
#include "perfdata/reader.hpp"
#include "report/process_symbols.hpp"
#include "report/script_printer.hpp"

namespace userperf::cli {

void add_script_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("script", "print the records of a perf.data file");
  auto input = std::make_shared<std::string>("perf.data");
  auto raw = std::make_shared<bool>(false);
  cmd->add_option("-i,--input", *input, "perf.data file to read")->capture_default_str();
  cmd->add_flag("--no-symbols", *raw, "print addresses without looking up ELF symbols");
  cmd->callback([input, raw, &exit_code] {
    auto reader = perfdata::Reader::open(*input);
    if (!reader) {
      std::fprintf(stderr, "userperf script: %s\n", reader.error().message.c_str());
      exit_code = 1;
      return;
    }
    report::ProcessSymbols symbols;
    report::ScriptOptions options;
    if (!*raw) options.symbols = &symbols;
    options.on_note = [&](const std::string& note) {
      std::fflush(stdout);
      std::fprintf(stderr, "userperf script: %s: %s\n", input->c_str(), note.c_str());
    };
    if (const Expected<void> printed = report::print_script(**reader, stdout, options); !printed) {
      std::fflush(stdout);
      std::fprintf(stderr, "userperf script: %s: %s\n", input->c_str(),
                   printed.error().message.c_str());
      exit_code = 1;
    }
  });
}

}  // namespace userperf::cli
