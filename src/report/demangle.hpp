// C++ (Itanium ABI) symbol names demangled; others as they are. The one demangler of userperf's
// symbolizers (ELF files in reports, this process's own addresses in the CLI's demos).
#pragma once

#include <string>

namespace userperf::report {

std::string demangle(const char* name);
// What perf shows by default (without --demangle-full): the demangled name without its parameter
// list and qualifiers, "fold_stmt" for "fold_stmt(gimple_stmt_iterator*)".
std::string demangle_without_parameters(const char* name);

}  // namespace userperf::report
