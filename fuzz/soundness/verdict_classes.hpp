// The kernel comparison's bookkeeping: a verdict's reason reduced to its class (the log's last
// line with every number replaced by N), and the classes of "userperf accepts, the kernel
// rejects" that are explained: differences on purpose, each with its reason. A class not in the
// list fails the campaign (a verifier bug until someone explains or fixes it).
#pragma once

#include <string>
#include <string_view>

namespace userperf::soundness {

std::string verdict_class(std::string_view reason);

// The explanation of a "userperf accepts, kernel rejects" class, or nullptr.
const char* explained_kernel_rejection(std::string_view verdict_class);

}  // namespace userperf::soundness
