#include "pmu/internal_thread.hpp"

namespace userperf::pmu {

namespace {

thread_local bool t_creating_internal_thread = false;

}  // namespace

bool creating_internal_thread() {
  return t_creating_internal_thread;
}

InternalThreadScope::InternalThreadScope() : previous_(t_creating_internal_thread) {
  t_creating_internal_thread = true;
}

InternalThreadScope::~InternalThreadScope() {
  t_creating_internal_thread = previous_;
}

}  // namespace userperf::pmu
