#include "report/collapsed_writer.hpp"

#include <cerrno>
#include <map>
#include <string>

namespace userperf::report {

namespace {

// ';' separates frames, so a name must not carry one (readers split the count off at the last
// space, so spaces may stay); a newline would end the line.
void append_frame(std::string& line, const std::string& name) {
  line += ';';
  for (char c : name) line += c == ';' ? ':' : (c == '\n' ? ' ' : c);
}

}  // namespace

Expected<void> write_collapsed(const Profile& profile, int event, const CollapsedOptions& options,
                               std::FILE* out) {
  // Stacks of several threads of one command fold into one line.
  std::map<std::string, std::uint64_t> lines;
  std::string line;
  for (const Stack& stack : profile.stacks) {
    if (stack.event != event || (options.accept && !options.accept(stack))) continue;
    line.clear();
    for (char c : profile.threads[stack.thread].command) line += c == ';' ? ':' : c;
    const auto frames = profile.frames_of(stack);
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
      append_frame(line, profile.function_of(*it).name);
    }
    lines[line] += options.period ? stack.period : stack.samples;
  }
  for (const auto& [stack, count] : lines) {
    if (std::fprintf(out, "%s %llu\n", stack.c_str(), static_cast<unsigned long long>(count)) < 0) {
      return Error{errno, "write failed"};
    }
  }
  return {};
}

}  // namespace userperf::report
