// `userperf report --format=pprof`: one event of a Profile as a gzipped profile.proto
// (github.com/google/pprof/proto/profile.proto), what `pprof`, Grafana Pyroscope, Parca and other
// profile stores read.
//
// The Profile is already pprof's model, so the tables come straight out of it: a Mapping per Dso
// (its path and build id), a Function per Function (name, source file, line of its entry), a
// Location per Location (the Dso's own address, one Line), a Sample per merged Stack (location ids
// leaf first, labels `pid`, `thread` (the tid) and `comm`). Values are `samples/count` and the
// summed period: `cpu/nanoseconds` for cpu-clock and task-clock, `events/count` for tracepoints,
// `<event>/count` for other events.
//
// Addresses are each Dso's link-time addresses (the same function at the same address in every
// process that mapped it), not one process's runtime addresses, so every Mapping spans the whole
// address space from 0 with file offset 0: pprof's convention for addresses already relative to
// the file (elfexec.GetBase takes start 0, offset 0, limit ~0 as "no adjustment"), which keeps
// `pprof -symbolize=local` and `pprof -lines` working on them.
//
// profile.proto has one list of sample types for all samples, so a pprof file holds one event:
// `event` (the caller picks: the first event with samples unless told otherwise); the file's other
// events are named in the profile's comments.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "report/profile.hpp"
#include "support/expected.hpp"

namespace userperf::report {

struct PprofOptions {
  int event = 0;
  std::function<bool(const Stack&)> accept;  // when set, only the stacks it accepts
  std::string source;                        // the input file's name, for a comment; may be ""
};

// The profile.proto message, not compressed (tests decode it); options.event must be an event of
// the profile.
std::string encode_pprof(const Profile& profile, const PprofOptions& options);

// encode_pprof gzipped (pprof reads both; gzip is what the tools write and stores expect); an
// error for an event the profile does not have (a file without attrs).
Expected<void> write_pprof(const Profile& profile, const PprofOptions& options, std::FILE* out);

// The name a Function has in the pprof file: its own, but "[unknown] <dso>" for a Dso's unknown
// function, since pprof's views group by name alone and would merge every shared object's
// unknown addresses into one row.
std::string pprof_function_name(const Profile& profile, FunctionId function);

}  // namespace userperf::report
