// The kernel comparison's bookkeeping: a verdict's reason reduced to its class (the log's last
// line with every number replaced by N), and the classes of "userperf accepts, the kernel
// rejects" that are explained: differences on purpose or understood and not matched, each with its
// reason and the program shape it needs. A class not explained fails the campaign (a verifier
// difference until someone explains or fixes it).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "bpf/isa/insn.hpp"

namespace userperf::soundness {

std::string verdict_class(std::string_view reason);

// The explanation of a "userperf accepts, kernel rejects" class for this program, or nullptr.
const char* explained_kernel_rejection(std::string_view verdict_class,
                                       std::span<const bpf::Insn> insns);

}  // namespace userperf::soundness
