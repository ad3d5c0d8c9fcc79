// libuserperf_agent.so against a recorder played by the test: agent_workload runs with the agent
// preloaded; the test answers Welcome, collects what each process image says, maps the rings it
// receives and reads their samples.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bpf/isa/image_codec.hpp"
#include "bpf/loader/elf_loader.hpp"
#include "record/exec_target.hpp"
#include "record/protocol.hpp"
#include "record/transport.hpp"
#include "ring/reader.hpp"
#include "userperf/userperf.h"

#ifdef USERPERF_AGENT_PATH

namespace userperf::record {
namespace {

constexpr std::uint64_t kSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
constexpr std::uint32_t kRingPages = 16;

struct Sample {
  std::uint64_t id = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
};

struct ThreadRing {
  ThreadStartMessage start;
  void* base = MAP_FAILED;
  std::size_t length = 0;
  void* aux = MAP_FAILED;

  std::vector<Sample> samples() const {
    std::vector<Sample> out;
    ring::RingView view;
    if (ring::make_ring_view(base, length, view) != ring::ReadStatus::kOk) return out;
    ring::Reader reader(view);
    ring::Record r;
    if (reader.begin() != ring::ReadStatus::kOk) return out;
    while (reader.next(r) == ring::ReadStatus::kOk) {
      if (r.header.type != PERF_RECORD_SAMPLE || r.bytes.size() < 8 + 32) continue;
      Sample s;
      std::memcpy(&s.id, r.bytes.data() + 8, 8);
      std::memcpy(&s.pid, r.bytes.data() + 24, 4);
      std::memcpy(&s.tid, r.bytes.data() + 28, 4);
      out.push_back(s);
    }
    return out;
  }
};

// What one process image said on its connection.
struct Image {
  HelloMessage hello;
  std::uint64_t id_base = 0;
  std::vector<std::unique_ptr<ThreadRing>> threads;
  std::vector<ThreadExitMessage> exits;
  std::vector<CommMessage> comms;
  std::vector<std::pair<std::uint32_t, std::string>> tracepoints;  // config index, format
  std::vector<ExecNoticeMessage> exec_notices;
  std::vector<EventCountsMessage> counts;
  bool process_exit = false;
};

struct WorkloadRun {
  int exit_status = -1;
  std::string out;
  std::string err;
  std::vector<std::unique_ptr<Image>> images;
};

enum class Behaviour { kNormal, kRefuse, kSilent, kCloseAfterFirstThread };

perf_event_attr clock_attr(std::uint64_t config) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = config;
  attr.sample_period = 1'000'000;  // 1 ms of CPU time
  attr.sample_type = kSampleType;
  attr.sample_id_all = 1;
  attr.exclude_kernel = 1;
  return attr;
}

// cpu-clock alone; or with an AUX area: a calltrace leader and a task-clock sampler in its group
// whose samples carry its newest bytes.
// kSlowClock: cpu-clock at a 50 ms period.
enum class Extra { kNone, kAux, kTracepoint, kSlowClock };
constexpr std::uint64_t kTracepointId = 7;

std::string config_text(const std::string& bpf_image, Extra extra) {
  RecordConfig config;
  config.bpf_image = bpf_image;
  config.ring_pages = kRingPages;
  if (extra != Extra::kAux) {
    perf_event_attr clock = clock_attr(PERF_COUNT_SW_CPU_CLOCK);
    if (extra == Extra::kSlowClock) clock.sample_period = 50'000'000;
    config.events.push_back({clock, "cpu-clock", -1});
  }
  if (extra == Extra::kTracepoint) {
    perf_event_attr tracepoint{};
    tracepoint.size = sizeof tracepoint;
    tracepoint.type = PERF_TYPE_TRACEPOINT;
    tracepoint.config = kTracepointId;
    tracepoint.sample_period = 1;
    tracepoint.sample_type = kSampleType | PERF_SAMPLE_RAW;
    tracepoint.sample_id_all = 1;
    tracepoint.exclude_kernel = 1;
    config.events.push_back({tracepoint, "agenttest:tick", -1});
  }
  if (extra != Extra::kAux) return config.encode();
  perf_event_attr leader{};
  leader.size = sizeof leader;
  leader.type = static_cast<std::uint32_t>(userperf_pmu_type("calltrace"));
  leader.sample_type = kSampleType;
  leader.sample_id_all = 1;
  leader.exclude_kernel = 1;
  perf_event_attr sampler = clock_attr(PERF_COUNT_SW_TASK_CLOCK);
  sampler.sample_type |= PERF_SAMPLE_AUX;
  sampler.aux_sample_size = 256;
  config.events.push_back({leader, "calltrace", -1});
  config.events.push_back({sampler, "task-clock", 0});
  config.aux = AuxSource::kCalltrace;
  config.aux_pages = 4;
  return config.encode();
}

void drain_pipe(int& fd, std::string& into) {
  char buf[4096];
  const ssize_t n = read(fd, buf, sizeof buf);
  if (n > 0) {
    into.append(buf, static_cast<std::size_t>(n));
  } else {
    close(fd);
    fd = -1;
  }
}

class FakeRecorder {
 public:
  FakeRecorder() {
    char dir_template[] = "/tmp/userperf-agent-test-XXXXXX";
    dir_ = mkdtemp(dir_template);
    path_ = dir_ + "/socket";
    listener_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, path_.c_str());
    if (bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        listen(listener_, 16) != 0) {
      ADD_FAILURE() << "listen on " << path_ << ": " << std::strerror(errno);
    }
  }
  ~FakeRecorder() {
    if (listener_ >= 0) close(listener_);
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }

  // Runs the workload in `mode` with `env` added (nullptr values are left unset).
  WorkloadRun run(const char* mode, std::map<std::string, const char*> env,
                  Behaviour behaviour = Behaviour::kNormal) {
    WorkloadRun result;
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) return result;
    const pid_t child = fork();
    if (child == 0) {
      dup2(out_pipe[1], 1);
      dup2(err_pipe[1], 2);
      for (const auto& [name, value] : env) {
        if (value != nullptr) setenv(name.c_str(), value, 1);
      }
      execl(USERPERF_AGENT_WORKLOAD, USERPERF_AGENT_WORKLOAD, mode, static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    int out_fd = out_pipe[0], err_fd = err_pipe[0];
    std::map<int, Image*> open;  // connection -> image
    bool reaped = false;
    bool listening = true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while ((!reaped || out_fd >= 0 || err_fd >= 0 || !open.empty()) &&
           std::chrono::steady_clock::now() < deadline) {
      std::vector<pollfd> fds;
      if (listening) fds.push_back({listener_, POLLIN, 0});
      if (out_fd >= 0) fds.push_back({out_fd, POLLIN, 0});
      if (err_fd >= 0) fds.push_back({err_fd, POLLIN, 0});
      for (const auto& entry : open) fds.push_back({entry.first, POLLIN, 0});
      poll(fds.data(), fds.size(), 50);
      for (const pollfd& p : fds) {
        if (p.revents == 0) continue;
        if (listening && p.fd == listener_) {
          const int c = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
          if (c >= 0) {
            result.images.push_back(std::make_unique<Image>());
            open[c] = result.images.back().get();
          }
        } else if (p.fd == out_fd) {
          drain_pipe(out_fd, result.out);
        } else if (p.fd == err_fd) {
          drain_pipe(err_fd, result.err);
        } else if (!receive(p.fd, *open[p.fd], behaviour, result.images.size())) {
          close(p.fd);
          open.erase(p.fd);
          if (behaviour == Behaviour::kCloseAfterFirstThread && listening) {
            // The recorder dies: every connection and the listener go.
            for (const auto& entry : open) close(entry.first);
            open.clear();
            listening = false;
          }
        }
      }
      int status = 0;
      if (!reaped && waitpid(child, &status, WNOHANG) == child) {
        reaped = true;
        result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
    }
    if (!reaped) {
      ADD_FAILURE() << "the workload did not finish";
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
    }
    for (const auto& entry : open) close(entry.first);
    if (out_fd >= 0) close(out_fd);
    if (err_fd >= 0) close(err_fd);
    return result;
  }

  std::map<std::string, const char*> env(const std::string& bpf_image = "",
                                         Extra extra = Extra::kNone) {
    config_ = config_text(bpf_image, extra);
    return {{"LD_PRELOAD", USERPERF_AGENT_PATH},
            {kSocketEnv, path_.c_str()},
            {kConfigEnv, config_.c_str()}};
  }

 private:
  // One message of `image`'s connection; false at its end (or when the recorder hangs up).
  bool receive(int c, Image& image, Behaviour behaviour, std::size_t nr_images) {
    alignas(8) unsigned char buf[kMaxMessageSize];
    int fds[kMaxMessageFds];
    int nfds = 0;
    const ssize_t n = receive_message(c, buf, sizeof buf, fds, kMaxMessageFds, &nfds);
    if (n < static_cast<ssize_t>(sizeof(MessageHeader))) {
      for (int i = 0; i < nfds; ++i) close(fds[i]);
      return false;
    }
    MessageHeader header;
    std::memcpy(&header, buf, sizeof header);
    EXPECT_EQ(header.size, static_cast<std::uint32_t>(n));
    const auto type = static_cast<MessageType>(header.type);
    bool keep = true;
    if (type == MessageType::kHello && n == sizeof(HelloMessage)) {
      std::memcpy(&image.hello, buf, sizeof image.hello);
      // A fork child that inherits its parent's ids waits for no answer.
      if (behaviour == Behaviour::kSilent || image.hello.inherits != 0) return true;
      WelcomeMessage welcome;
      welcome.accepted = behaviour == Behaviour::kRefuse ? 0 : 1;
      welcome.id_base = static_cast<std::uint64_t>(nr_images) << 32;
      image.id_base = welcome.id_base;
      EXPECT_EQ(send_message(c, &welcome, sizeof welcome), 0);
    } else if (type == MessageType::kThreadStart && n == sizeof(ThreadStartMessage)) {
      auto ring = std::make_unique<ThreadRing>();
      std::memcpy(&ring->start, buf, sizeof ring->start);
      EXPECT_EQ(nfds, ring->start.has_aux ? 2 : 1);
      if (nfds >= 1) {
        struct stat st {};
        fstat(fds[0], &st);
        ring->length = static_cast<std::size_t>(st.st_size);
        ring->base = mmap(nullptr, ring->length, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
      }
      if (nfds == 2) {
        struct stat st {};
        fstat(fds[1], &st);
        ring->aux =
            mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fds[1], 0);
      }
      image.threads.push_back(std::move(ring));
      keep = behaviour != Behaviour::kCloseAfterFirstThread;
    } else if (type == MessageType::kThreadExit && n == sizeof(ThreadExitMessage)) {
      image.exits.emplace_back();
      std::memcpy(&image.exits.back(), buf, sizeof(ThreadExitMessage));
    } else if (type == MessageType::kComm && n == sizeof(CommMessage)) {
      image.comms.emplace_back();
      std::memcpy(&image.comms.back(), buf, sizeof(CommMessage));
    } else if (type == MessageType::kTracepoint &&
               n >= static_cast<ssize_t>(sizeof(TracepointMessage))) {
      TracepointMessage message;
      std::memcpy(&message, buf, sizeof message);
      EXPECT_EQ(sizeof message + message.format_size, static_cast<std::size_t>(n));
      image.tracepoints.emplace_back(
          message.config_index, std::string(reinterpret_cast<const char*>(buf) + sizeof message,
                                            static_cast<std::size_t>(n) - sizeof message));
    } else if (type == MessageType::kEventCounts && n == sizeof(EventCountsMessage)) {
      EXPECT_FALSE(image.process_exit) << "EventCounts come before ProcessExit";
      image.counts.emplace_back();
      std::memcpy(&image.counts.back(), buf, sizeof(EventCountsMessage));
    } else if (type == MessageType::kProcessExit && n == sizeof(ProcessExitMessage)) {
      image.process_exit = true;
    } else if (type == MessageType::kExecNotice && n == sizeof(ExecNoticeMessage)) {
      image.exec_notices.emplace_back();
      std::memcpy(&image.exec_notices.back(), buf, sizeof(ExecNoticeMessage));
    } else {
      ADD_FAILURE() << "unexpected message type " << header.type << " size " << n;
    }
    for (int i = 0; i < nfds; ++i) close(fds[i]);  // mappings outlive their descriptors
    return keep;
  }

  std::string dir_;
  std::string path_;
  std::string config_;
  int listener_ = -1;
};

// Every sample of the image's rings is its own thread's and carries an id of that thread's event.
// `inherited`: the image is a fork child whose events carry these ids (its forking thread's).
void expect_own_samples(const Image& image, std::size_t min_samples_per_thread,
                        const std::vector<std::uint64_t>& inherited = {}) {
  for (const auto& thread : image.threads) {
    ASSERT_NE(thread->base, MAP_FAILED);
    ASSERT_GE(thread->start.nr_events, 1u);
    ASSERT_LE(thread->start.nr_events, kMaxThreadEvents);
    // The sampling event is the last one configured.
    const std::uint64_t id = thread->start.events[thread->start.nr_events - 1].id;
    for (std::uint32_t i = 0; i < thread->start.nr_events; ++i) {
      EXPECT_EQ(thread->start.events[i].config_index, i);
      if (!inherited.empty()) {
        ASSERT_EQ(inherited.size(), thread->start.nr_events);
        EXPECT_EQ(thread->start.events[i].id, inherited[i]);
        continue;
      }
      EXPECT_GT(thread->start.events[i].id, image.id_base);
      EXPECT_LT(thread->start.events[i].id, image.id_base + (1ull << 32));
    }
    const std::vector<Sample> samples = thread->samples();
    EXPECT_GE(samples.size(), min_samples_per_thread)
        << "process " << image.hello.pid << " thread " << thread->start.tid;
    for (const Sample& s : samples) {
      EXPECT_EQ(s.id, id);
      EXPECT_EQ(s.pid, static_cast<std::uint32_t>(image.hello.pid));
      EXPECT_EQ(s.tid, static_cast<std::uint32_t>(thread->start.tid));
    }
  }
}

TEST(AgentTest, EachThreadStartsSamplesIntoItsOwnRingAndExits) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("threads", recorder.env());
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "threads done\n");
  ASSERT_EQ(run.images.size(), 1u);
  const Image& image = *run.images[0];
  EXPECT_EQ(image.hello.version, kProtocolVersion);
  EXPECT_EQ(image.hello.ppid, getpid());
  EXPECT_EQ(image.hello.parent_tid, 0);
  ASSERT_EQ(image.threads.size(), 3u);
  const pid_t pid = image.hello.pid;
  std::set<pid_t> tids;
  for (const auto& thread : image.threads) {
    EXPECT_EQ(thread->start.pid, pid);
    EXPECT_EQ(thread->start.has_aux, 0u);
    // The main thread is the process's first; the workers were created by it.
    EXPECT_EQ(thread->start.ptid, thread->start.tid == pid ? 0 : pid);
    tids.insert(thread->start.tid);
  }
  EXPECT_EQ(tids.size(), 3u);
  EXPECT_TRUE(tids.count(pid));
  // The workers end with ThreadExit; the main thread with the process's exit().
  std::set<pid_t> exited;
  for (const ThreadExitMessage& exit : image.exits) exited.insert(exit.tid);
  std::set<pid_t> workers = tids;
  workers.erase(pid);
  EXPECT_EQ(exited, workers);
  EXPECT_TRUE(image.process_exit);
  // 150 ms of CPU per thread at 1 ms: how many samples depends on the load, but not none.
  expect_own_samples(image, 1);
  // pthread_setname_np in each worker, once the recorder heard of it.
  EXPECT_EQ(image.comms.size(), 2u);
  for (const CommMessage& comm : image.comms) EXPECT_STREQ(comm.comm, "worker");
}

// The recorder hears of a process at its first sample: one that ends before it (a shell's fork
// child on its way to exec, a short command) never connects, as an unsampled process costs kernel
// perf nothing. At a 50 ms period: at 1 ms the loader and the agent's start, slower beside two
// busy programs, gave the process a whole period (it said Hello in 1 of 4 runs).
TEST(AgentTest, ProcessThatEndsBeforeItsFirstSampleNeverConnects) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("quick", recorder.env("", Extra::kSlowClock));
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "quick done\n");
  EXPECT_EQ(run.err, "");
  EXPECT_TRUE(run.images.empty()) << "it said Hello";
}

TEST(AgentTest, ManyThreadsStartAndEndConcurrently) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("many", recorder.env());
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "many done\n");
  ASSERT_EQ(run.images.size(), 1u);
  const Image& image = *run.images[0];
  // Each worker burns 20 ms and so is heard of, and ends with ThreadExit. The main thread only
  // creates and joins them: it is heard of when that took half a sampling period of CPU (it did in
  // about one run of five on a loaded machine), and then ends with the process's exit.
  const pid_t pid = image.hello.pid;
  std::set<std::uint64_t> ids;
  std::size_t workers = 0;
  for (const auto& thread : image.threads) {
    ids.insert(thread->start.events[0].id);
    workers += thread->start.tid != pid ? 1 : 0;
  }
  EXPECT_EQ(workers, 16u);
  EXPECT_LE(image.threads.size(), 17u);
  EXPECT_EQ(ids.size(), image.threads.size()) << "two threads announced the same event id";
  std::set<pid_t> exited;
  for (const ThreadExitMessage& exit : image.exits) exited.insert(exit.tid);
  EXPECT_EQ(exited.size(), 16u);
  EXPECT_FALSE(exited.count(pid)) << "the main thread ends with the process, not ThreadExit";
  expect_own_samples(image, 0);
}

// The image of an object, as `userperf record --bpf` writes it for the agents, in a file of the
// test's own (removed with the object).
class BpfImageFile {
 public:
  explicit BpfImageFile(const std::vector<std::uint8_t>& bytes) {
    char path[] = "/tmp/userperf-agent-test-XXXXXX";
    const int fd = mkstemp(path);
    EXPECT_GE(fd, 0);
    path_ = path;
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    close(fd);
  }
  ~BpfImageFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::uint8_t> image_of(const std::string& elf) {
  auto image = bpf::load_elf_file(elf);
  EXPECT_TRUE(image) << image.error().message;
  return image ? bpf::encode_object_image(*image) : std::vector<std::uint8_t>{};
}

// bench_filter keeps only samples of non-PIE text (0x400000..0x800000): the workload is PIE, so
// the attached program drops every sample.
TEST(AgentTest, BpfProgramFiltersEverySamplingEvent) {
  FakeRecorder recorder;
  const BpfImageFile file(image_of(USERPERF_BPF_OBJECT_DIR "/progs/bench_filter.bpf.o"));
  const WorkloadRun run = recorder.run("threads", recorder.env(file.path()));
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  ASSERT_EQ(run.images.size(), 1u);
  ASSERT_EQ(run.images[0]->threads.size(), 3u);
  for (const auto& thread : run.images[0]->threads) EXPECT_TRUE(thread->samples().empty());
}

TEST(AgentTest, BpfLoadFailureIsOneLineAndRecordsWithoutIt) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("threads", recorder.env("/nonexistent/prog.image"));
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.err.find("userperf agent: --bpf image /nonexistent/prog.image:"), 0u) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1);
  ASSERT_EQ(run.images.size(), 1u);
  expect_own_samples(*run.images[0], 1);
}

// An image cut short (the file of a recorder that died writing it, or anything else) is refused by
// the decoder, in one line, and the process records without it.
TEST(AgentTest, CorruptBpfImageIsOneLineAndRecordsWithoutIt) {
  std::vector<std::uint8_t> bytes = image_of(USERPERF_BPF_OBJECT_DIR "/progs/bench_filter.bpf.o");
  ASSERT_GT(bytes.size(), 40u);
  bytes.resize(bytes.size() - 9);
  const BpfImageFile file(bytes);
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("threads", recorder.env(file.path()));
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_NE(run.err.find("bad object image"), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1);
  ASSERT_EQ(run.images.size(), 1u);
  expect_own_samples(*run.images[0], 1);
}

TEST(AgentTest, AuxLeaderOwnsTheRingAndItsAreaTravelsToo) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("threads", recorder.env("", Extra::kAux));
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "threads done\n");
  ASSERT_EQ(run.images.size(), 1u);
  const Image& image = *run.images[0];
  ASSERT_EQ(image.threads.size(), 3u);
  for (const auto& thread : image.threads) {
    EXPECT_EQ(thread->start.has_aux, 1u);
    EXPECT_EQ(thread->start.nr_events, 2u);
    EXPECT_NE(thread->aux, MAP_FAILED);
  }
  expect_own_samples(image, 1);
}

TEST(AgentTest, TracepointFormatIsSentAndFiringsAreSampled) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("tracepoint", recorder.env("", Extra::kTracepoint));
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "tracepoint enabled\n");
  ASSERT_EQ(run.images.size(), 1u);
  const Image& image = *run.images[0];
  ASSERT_EQ(image.tracepoints.size(), 1u);
  EXPECT_EQ(image.tracepoints[0].first, 1u);
  EXPECT_NE(image.tracepoints[0].second.find("tick"), std::string::npos);
  ASSERT_EQ(image.threads.size(), 1u);
  const ThreadRing& thread = *image.threads[0];
  ASSERT_EQ(thread.start.nr_events, 2u);
  std::size_t firings = 0;
  for (const Sample& s : thread.samples()) firings += s.id == thread.start.events[1].id;
  EXPECT_EQ(firings, 100u);
  // At exit, what the thread's events counted: the tracepoint's 100 hits, none lost. (The clock
  // may count a whole period lost at exit: one the thread ran since its last sample, as on a
  // slower machine in one run of the whole suite.)
  ASSERT_EQ(image.counts.size(), 1u);
  const EventCountsMessage& counts = image.counts[0];
  EXPECT_EQ(counts.pid, image.hello.pid);
  EXPECT_EQ(counts.tid, thread.start.tid);
  ASSERT_EQ(counts.nr_events, 2u);
  for (std::uint32_t i = 0; i < 2; ++i) {
    EXPECT_EQ(counts.events[i].config_index, i);
    EXPECT_EQ(counts.events[i].id, thread.start.events[i].id);
  }
  EXPECT_EQ(counts.events[1].lost, 0u);
  EXPECT_EQ(counts.events[1].count, 100u);
}

TEST(AgentTest, ForkChildSaysHelloAndSamplesIntoItsOwnRing) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("fork", recorder.env());
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "child done\nfork done 0\n");
  ASSERT_EQ(run.images.size(), 2u);
  const Image& parent = *run.images[0];
  const Image& child = *run.images[1];
  EXPECT_NE(child.hello.pid, parent.hello.pid);
  EXPECT_EQ(child.hello.ppid, parent.hello.pid);
  EXPECT_EQ(child.hello.parent_tid, parent.hello.pid);  // the parent's main thread forked
  ASSERT_EQ(parent.threads.size(), 1u);
  ASSERT_EQ(child.threads.size(), 1u);
  EXPECT_EQ(child.threads[0]->start.tid, child.hello.pid);
  EXPECT_EQ(child.threads[0]->start.ptid, 0);
  // The kernel's inherited events report their parent's ids: the child's events carry its
  // forking thread's, and its Hello waits for no Welcome.
  EXPECT_EQ(child.hello.inherits, 1u);
  std::vector<std::uint64_t> parent_ids;
  for (std::uint32_t i = 0; i < parent.threads[0]->start.nr_events; ++i) {
    parent_ids.push_back(parent.threads[0]->start.events[i].id);
  }
  expect_own_samples(parent, 1);
  expect_own_samples(child, 1, parent_ids);
  EXPECT_TRUE(child.process_exit);
}

std::vector<std::uint64_t> thread_ids(const ThreadRing& thread) {
  std::vector<std::uint64_t> ids;
  for (std::uint32_t i = 0; i < thread.start.nr_events; ++i)
    ids.push_back(thread.start.events[i].id);
  return ids;
}

// The child takes its forking thread's events over at its first tick; the thread it starts after
// that gets events of its own, which carry the same ids (as the kernel's inherited events do).
TEST(AgentTest, ForkChildsThreadsCarryTheForkingThreadsIds) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("fork-thread", recorder.env());
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "child threads done\nfork done 0\n");
  ASSERT_EQ(run.images.size(), 2u);
  const Image& parent = *run.images[0];
  const Image& child = *run.images[1];
  EXPECT_EQ(child.hello.ppid, parent.hello.pid);
  EXPECT_EQ(child.hello.inherits, 1u);
  ASSERT_EQ(parent.threads.size(), 1u);
  ASSERT_EQ(child.threads.size(), 2u);
  const std::vector<std::uint64_t> parent_ids = thread_ids(*parent.threads[0]);
  expect_own_samples(child, 1, parent_ids);
  std::vector<pid_t> tids;
  for (const auto& thread : child.threads) tids.push_back(thread->start.tid);
  EXPECT_NE(std::find(tids.begin(), tids.end(), child.hello.pid), tids.end());
  EXPECT_NE(tids[0], tids[1]);
  EXPECT_TRUE(child.process_exit);
}

// A fork child that forks before its first sample: its clocks follow it first, and the grandchild
// takes them over from it; every generation's events carry the first parent's ids.
TEST(AgentTest, ForkChildThatForksAtOnceHandsItsEventsOn) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("fork-fork", recorder.env());
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "grandchild done\nchild done 0\nfork done 0\n");
  ASSERT_EQ(run.images.size(), 3u);
  const Image* parent = run.images[0].get();
  const Image* child = nullptr;
  const Image* grandchild = nullptr;
  for (const auto& image : run.images) {
    if (image->hello.ppid == parent->hello.pid) child = image.get();
  }
  ASSERT_NE(child, nullptr);
  for (const auto& image : run.images) {
    if (image->hello.ppid == child->hello.pid) grandchild = image.get();
  }
  ASSERT_NE(grandchild, nullptr);
  EXPECT_EQ(grandchild->hello.parent_tid, child->hello.pid);
  ASSERT_EQ(parent->threads.size(), 1u);
  const std::vector<std::uint64_t> parent_ids = thread_ids(*parent->threads[0]);
  for (const Image* image : {child, grandchild}) {
    EXPECT_EQ(image->hello.inherits, 1u);
    ASSERT_EQ(image->threads.size(), 1u);
    expect_own_samples(*image, 1, parent_ids);
    EXPECT_TRUE(image->process_exit);
  }
}

TEST(AgentTest, ExecedImageSaysHelloAgainWithTheSamePid) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("exec", recorder.env());
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "spin done\n");
  ASSERT_EQ(run.images.size(), 2u);
  EXPECT_EQ(run.images[0]->hello.pid, run.images[1]->hello.pid);
  EXPECT_FALSE(run.images[0]->process_exit);  // exec is no exit
  EXPECT_TRUE(run.images[1]->process_exit);
  // The old image announced its exec (its connection's end is the exec's), of a program the agent
  // enters.
  ASSERT_EQ(run.images[0]->exec_notices.size(), 1u);
  const ExecNoticeMessage& notice = run.images[0]->exec_notices[0];
  EXPECT_EQ(notice.pid, run.images[0]->hello.pid);
  EXPECT_EQ(notice.failed, 0u);
  EXPECT_EQ(notice.target, static_cast<std::uint32_t>(ExecTarget::kEnterable));
  EXPECT_EQ(std::string(notice.path), USERPERF_AGENT_WORKLOAD);
  for (const auto& image : run.images) ASSERT_EQ(image->threads.size(), 1u);
  // Before it is replaced, the old image says what its thread's events counted.
  ASSERT_EQ(run.images[0]->counts.size(), 1u);
  EXPECT_EQ(run.images[0]->counts[0].tid, run.images[0]->threads[0]->start.tid);
  EXPECT_EQ(run.images[0]->counts[0].events[0].id, run.images[0]->threads[0]->start.events[0].id);
  expect_own_samples(*run.images[1], 1);
}

// dlopen is not wrapped (the recorder finds new objects in /proc/PID/maps; cli_record_dlopen checks
// that their functions are named): the program's dlopen works as without the agent.
TEST(AgentTest, DlopenWorksUnwrappedAndPrctlSendsComm) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("dlopen", recorder.env());
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "dlopen ok\n");
  ASSERT_EQ(run.images.size(), 1u);
  const Image& image = *run.images[0];
  ASSERT_EQ(image.comms.size(), 1u);
  EXPECT_STREQ(image.comms[0].comm, "renamed");
}

TEST(AgentTest, ProgramRunsOnWhenTheRecorderGoesAway) {
  FakeRecorder recorder;
  const WorkloadRun run =
      recorder.run("threads", recorder.env(), Behaviour::kCloseAfterFirstThread);
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "threads done\n");
  ASSERT_EQ(run.images.size(), 1u);
  EXPECT_EQ(run.images[0]->threads.size(), 1u);
}

TEST(AgentTest, RefusedProcessRunsUnrecorded) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("threads", recorder.env(), Behaviour::kRefuse);
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "threads done\n");
  ASSERT_EQ(run.images.size(), 1u);
  EXPECT_TRUE(run.images[0]->threads.empty());
}

// The agent waits about 5 s for a Welcome, then runs on unrecorded.
TEST(AgentTest, SilentRecorderLeavesTheProgramUnrecorded) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("threads", recorder.env(), Behaviour::kSilent);
  EXPECT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "threads done\n");
  EXPECT_EQ(run.err, "userperf agent: the recorder did not welcome this process; not recording\n");
  ASSERT_EQ(run.images.size(), 1u);
  EXPECT_TRUE(run.images[0]->threads.empty());
}

TEST(AgentTest, BadConfigIsOneLineAndTheProgramRunsNormally) {
  FakeRecorder recorder;
  auto env = recorder.env();
  env[kConfigEnv] = "this is no config";
  const WorkloadRun run = recorder.run("threads", env);
  EXPECT_EQ(run.exit_status, 0);
  EXPECT_EQ(run.out, "threads done\n");
  EXPECT_TRUE(run.images.empty());
  EXPECT_EQ(run.err.find("userperf agent: bad USERPERF_RECORD_CONFIG"), 0u) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1);
}

TEST(AgentTest, AbsentEnvironmentRunsSilently) {
  FakeRecorder recorder;
  const WorkloadRun run = recorder.run("fork", {{"LD_PRELOAD", USERPERF_AGENT_PATH}});
  EXPECT_EQ(run.exit_status, 0);
  EXPECT_EQ(run.out, "child done\nfork done 0\n");
  EXPECT_EQ(run.err, "");
  EXPECT_TRUE(run.images.empty());
}

}  // namespace
}  // namespace userperf::record

#endif  // USERPERF_AGENT_PATH
