// The process-wide engine and BPF registry behind the C API (engine_instance.cpp).
#pragma once

namespace userperf::api {

// In a fork child: a fresh engine (built-in PMUs) and BPF registry replace the inherited ones,
// which are leaked, never used again: their locks may be held by threads that do not exist in the
// child, and their rings belong to the parent. Call in the child before any other userperf call
// (the agent calls it from its fork() wrapper, after every atfork child handler has run).
void reset_after_fork();

}  // namespace userperf::api
