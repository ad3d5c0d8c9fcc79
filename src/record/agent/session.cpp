#include "record/agent/session.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "abi/attr_rules.hpp"
#include "api/engine_instance.hpp"
#include "bpf/isa/image_codec.hpp"
#include "bpf/perf/bpf_registry.hpp"
#include "core/engine.hpp"
#include "pmu/clock/clock_timer.hpp"
#include "record/agent/thread_events.hpp"
#include "record/agent/tracepoints.hpp"
#include "record/transport.hpp"
#include "support/descriptors.hpp"
#include "support/task_ids.hpp"
#include "userperf/userperf.h"

namespace userperf::record::agent {
namespace {

constexpr int kWelcomeTimeoutMs = 5000;
constexpr time_t kSendTimeoutSeconds = 2;

std::atomic<Session*> g_session{nullptr};
std::atomic<bool> g_quiet{false};  // an attached agent says nothing on the program's stderr
thread_local int t_engine_callbacks = 0;

// The clock handler's word that a thread is busy and unpoked (pmu::ExternalTicker): straight to
// the recorder's ticker. SIGNAL-SAFE: no lock, no allocation, and a send that never blocks (a
// full socket drops it; the thread says it again a few periods later).
void say_clock_busy(pid_t tid) {
  Session* session = g_session.load(std::memory_order_acquire);
  // Only a thread the recorder knows: it pokes the clocks its ThreadStart named.
  if (session == nullptr || !session->active.load(std::memory_order_relaxed) ||
      !current_thread_heard()) {
    return;
  }
  if (support::owns_descriptor(session->socket) && !support::still_ours(session->socket)) return;
  BusyClockMessage message;
  message.pid = session->pid;
  message.tid = tid;
  ::send(session->socket, &message, sizeof message, MSG_DONTWAIT | MSG_NOSIGNAL);
}

int connect_to(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof address.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = support::place_descriptor(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (fd < 0) return -1;
  const timeval send_timeout{kSendTimeoutSeconds, 0};
  if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout) != 0 ||
      connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

// Hello, then the Welcome (or nothing within the timeout). True when accepted. A fork child that
// inherits its parent's ids says Hello and goes on: it needs no id base. SIGNAL-SAFE.
bool greet(int fd, pid_t pid, pid_t parent_tid, bool inherits, bool attached, std::uint64_t time,
           std::uint64_t& id_base) {
  HelloMessage hello;
  hello.attached = attached ? 1 : 0;
  hello.pid = pid;
  hello.ppid = getppid();
  hello.parent_tid = parent_tid;
  hello.time = time;
  hello.inherits = inherits ? 1 : 0;
  if (send_message(fd, &hello, sizeof hello) != 0) return false;
  if (inherits) return true;
  pollfd p{fd, POLLIN, 0};
  int ready;
  while ((ready = poll(&p, 1, kWelcomeTimeoutMs)) < 0 && errno == EINTR) {
  }
  if (ready <= 0) return false;
  WelcomeMessage welcome;
  int fds[kMaxMessageFds];
  int nfds = 0;
  const ssize_t n = receive_message(fd, &welcome, sizeof welcome, fds, kMaxMessageFds, &nfds);
  for (int i = 0; i < nfds; ++i) close(fds[i]);
  if (n != static_cast<ssize_t>(sizeof welcome) ||
      welcome.header.type != static_cast<std::uint32_t>(MessageType::kWelcome) ||
      welcome.header.size != sizeof welcome || welcome.accepted == 0) {
    return false;
  }
  id_base = welcome.id_base;
  return true;
}

// What a config needs beyond decode(): events a thread can open in index order.
bool check_config(Session& session) {
  const auto& events = session.config.events;
  if (events.empty() || events.size() > kMaxThreadEvents) {
    say("the config names no events or too many; not recording");
    return false;
  }
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].group_leader >= static_cast<int>(i)) {
      say("event %s has a group leader after it; not recording", events[i].name.c_str());
      return false;
    }
  }
  session.ring_owner = 0;
  if (session.config.aux != AuxSource::kNone) {
    const char* pmu = session.config.aux == AuxSource::kCalltrace ? "calltrace" : "log";
    const int type = userperf_pmu_type(pmu);
    session.ring_owner = -1;
    for (std::size_t i = 0; i < events.size() && session.ring_owner < 0; ++i) {
      if (type >= 0 && events[i].attr.type == static_cast<std::uint32_t>(type)) {
        session.ring_owner = static_cast<int>(i);
      }
    }
    if (session.ring_owner < 0) {
      say("no %s event for the AUX area; not recording", pmu);
      return false;
    }
  }
  return true;
}

// The --bpf program, from the image the recorder wrote (it parsed and verified the object once).
void load_bpf(Session& session) {
  if (session.config.bpf_image.empty()) return;
  const char* path = session.config.bpf_image.c_str();
  std::vector<std::uint8_t> bytes;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    std::uint8_t chunk[16384];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR)) {
      if (n > 0) bytes.insert(bytes.end(), chunk, chunk + n);
    }
    close(fd);
  }
  if (fd < 0 || bytes.empty()) {
    say("--bpf image %s: %s; recording without it", path, std::strerror(fd < 0 ? errno : EIO));
    return;
  }
  auto image = bpf::decode_object_image(bytes);
  std::string log;
  const int prog =
      image
          ? api::bpf_registry().load_program(
                std::move(*image), "", &log,
                // the recorder loaded the same image with the same tier: it said any fallback
                {.jit = (session.config.flags & kConfigBpfInterpreter) == 0, .say_fallback = false})
          : -image.error().code;
  if (prog < 0) {
    say("--bpf image %s: %s; recording without it", path,
        image ? std::strerror(-prog) : image.error().message.c_str());
    return;
  }
  session.bpf_prog = prog;
}

// A configured session: engine, ticker, tracepoints and --bpf set up; Hello waits for the first
// sample unless the config needs it at once.
Session* start_session(const std::string& socket_path, const RecordConfig& config, pid_t parent_tid,
                       std::vector<std::uint64_t> inherited_ids, bool attached = false) {
  auto* session = new Session();
  session->attached = attached;
  session->start_ns = monotonic_ns();
  session->socket_path = socket_path;
  session->config = config;
  session->pid = getpid();
  session->parent_tid = parent_tid;
  session->inherited_ids = std::move(inherited_ids);
  session->inherits = !session->inherited_ids.empty();
  // Leaked when refused too: a Session is never freed (threads may still look at it).
  if (!check_config(*session)) return nullptr;
  if (session->config.nr_cpus > 0) {
    abi::OpenLimits limits;
    limits.max_sample_rate = session->config.max_sample_rate;
    limits.max_stack = session->config.max_stack;
    limits.paranoid = session->config.paranoid;
    limits.nr_cpus = static_cast<int>(session->config.nr_cpus);
    abi::prime_host_limits(limits);
  }
  session->eager = attached || session->config.aux != AuxSource::kNone;
  for (const EventConfig& e : session->config.events) {
    session->eager = session->eager || e.attr.type == PERF_TYPE_TRACEPOINT;
  }
  if (session->config.ticker_pid > 0) {
    pmu::use_external_ticker({session->config.ticker_pid, say_clock_busy});
  }
  session->active.store(true);
  g_session.store(session, std::memory_order_release);
  if (session->eager && !say_hello(*session)) return nullptr;
  // Published first: tracepoints registered before this constructor ran (in libraries the program
  // links, whose constructors run earlier) bind inside define_tracepoints and send their formats
  // through the session at once.
  define_tracepoints(*session);
  load_bpf(*session);
  return session;
}

}  // namespace

void say(const char* format, ...) {
  // An attached agent leaves the program's output as it was: the recorder says what failed.
  if (g_quiet.load(std::memory_order_relaxed)) return;
  char line[256];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  std::fprintf(stderr, "userperf agent: %s\n", line);
}

void say_from_handler(const char* what) {
  if (g_quiet.load(std::memory_order_relaxed)) return;
  char line[160] = "userperf agent: ";
  std::strncat(line, what, sizeof line - std::strlen(line) - 2);
  std::strcat(line, "\n");
  if (write(STDERR_FILENO, line, std::strlen(line)) < 0) return;
}

Session* current_session() {
  Session* session = g_session.load(std::memory_order_acquire);
  return session != nullptr && session->active.load() ? session : nullptr;
}

bool heard(const Session& session) {
  return session.state.load(std::memory_order_acquire) == Session::kHeard;
}

bool say_hello(Session& session) {
  int expected = Session::kQuiet;
  if (!session.state.compare_exchange_strong(expected, Session::kSaying)) {
    return expected == Session::kHeard;
  }
  const int fd = connect_to(session.socket_path);
  std::uint64_t id_base = 0;
  if (fd < 0 || !greet(fd, session.pid, session.parent_tid, session.inherits, session.attached,
                       session.start_ns, id_base)) {
    if (fd >= 0) close(fd);
    session.active.store(false);
    say_from_handler(fd < 0 ? "cannot connect to the recorder; not recording"
                            : "the recorder did not welcome this process; not recording");
    return false;
  }
  session.socket = fd;
  session.id_base.store(id_base, std::memory_order_relaxed);
  session.state.store(Session::kHeard, std::memory_order_release);
  return true;
}

Session* start_session_from_env() {
  const char* socket_path = std::getenv(kSocketEnv);
  const char* text = std::getenv(kConfigEnv);
  if (socket_path == nullptr && text == nullptr) return nullptr;
  if (socket_path == nullptr || text == nullptr) {
    say("USERPERF_RECORD_SOCKET and USERPERF_RECORD_CONFIG go together; not recording");
    return nullptr;
  }
  const Expected<RecordConfig> config = RecordConfig::decode(text);
  if (!config) {
    say("bad USERPERF_RECORD_CONFIG: %s; not recording", config.error().message.c_str());
    return nullptr;
  }
  return start_session(socket_path, *config, 0, {});
}

Session* start_attached_session(const std::string& socket_path, const RecordConfig& config,
                                int* error) {
  g_quiet.store(true, std::memory_order_relaxed);
  Session* session = start_session(socket_path, config, 0, {}, true);
  if (session == nullptr) {
    // Refused before it was published (a bad config), or after: the recorder did not welcome it,
    // and the idle session is forgotten.
    Session* published = g_session.load();
    const bool refused = published != nullptr && !published->active.load();
    *error = refused ? ECONNREFUSED : EINVAL;
    if (refused) g_session.store(nullptr);
  }
  return session;
}

void end_attached_session(Session& session) {
  send_all_counts(session, true);
  go_idle(session);
  // The program gets its descriptors back as they were: with every event closed and the session
  // inactive nothing of the agent sends on the socket any more (no external ticker is told of busy
  // clocks, every thread was announced at the attach).
  if (heard(session) && session.socket >= 0 &&
      (!support::owns_descriptor(session.socket) || support::still_ours(session.socket))) {
    support::release_descriptor(session.socket);
    close(session.socket);
    session.socket = -1;
  }
  Session* expected = &session;
  g_session.compare_exchange_strong(expected, nullptr);
}

Session* leave_parent_session_in_child() {
  Session* parent = current_session();
  Session* inherited = g_session.exchange(nullptr);
  // The parent's conversation: the child's copy of the socket goes, the parent's stays.
  if (inherited != nullptr && heard(*inherited) && inherited->socket >= 0) {
    close(inherited->socket);
  }
  return parent;
}

Session* start_child_session(const Session& parent, pid_t parent_tid,
                             std::vector<std::uint64_t> inherited_ids) {
  if (inherited_ids.size() != parent.config.events.size()) inherited_ids.clear();
  return start_session(parent.socket_path, parent.config, parent_tid, std::move(inherited_ids));
}

void adopt_forked_session(Session& session, pid_t parent_tid, bool inherits) {
  // The parent's connection, in the child's descriptor table: let go, never written into.
  if (session.state.load() == Session::kHeard && session.socket >= 0 &&
      (!support::owns_descriptor(session.socket) || support::still_ours(session.socket))) {
    close(session.socket);
  }
  session.socket = -1;
  session.pid = getpid();
  session.parent_tid = parent_tid;
  session.start_ns = monotonic_ns();
  session.inherits = inherits;
  session.id_base.store(0);
  session.state.store(Session::kQuiet, std::memory_order_release);
}

Session* inherited_session() {
  return g_session.load(std::memory_order_acquire);
}

bool send_exec_notice(Session& session, const ExecNoticeMessage& message, bool must_name) {
  const pid_t self = static_cast<pid_t>(message.pid);
  if (session.pid == self) {  // the process's own session
    if (must_name && !say_hello(session)) return false;
    return send(session, &message, sizeof message);
  }
  // A child on its parent's session: a vfork child, or a lazy fork child not settled yet.
  const pid_t cached = support::cached_tid();
  const bool vfork_child = cached != 0 && cached != gettid();
  // A quiet process says nothing of a program the agent enters.
  if (!must_name)
    return vfork_child && heard(session) &&
           send_message(session.socket, &message, sizeof message) == 0;
  if (!vfork_child) {
    // Settling writes the session and the thread's events: only a child that must speak does it
    // (a shell's fork child on its way to exec copies none of those pages).
    settle_fork_child();
    if (session.pid != self) return false;  // its thread had no clock to follow it
    return say_hello(session) && send(session, &message, sizeof message);
  }
  if (heard(session)) return send_message(session.socket, &message, sizeof message) == 0;
  const int fd = connect_to(session.socket_path);
  std::uint64_t id_base = 0;
  const bool sent = fd >= 0 && greet(fd, self, 0, false, false, monotonic_ns(), id_base) &&
                    send_message(fd, &message, sizeof message) == 0;
  if (fd >= 0) close(fd);
  return sent;
}

bool send(Session& session, const void* message, std::size_t size, const int* fds, int nfds) {
  if (!session.active.load() || !heard(session)) return false;
  // A fork child's copy of its parent's session, before it adopts it, speaks for nobody.
  if (session.pid != getpid()) return false;
  // Closed behind the agent's back (a raw close_range) and maybe another file at that number now:
  // never written into (support/descriptors.hpp).
  if (support::owns_descriptor(session.socket) && !support::still_ours(session.socket)) {
    say("the program closed the agent's connection to the recorder (descriptor %d); recording of "
        "this process stops",
        session.socket);
    session.active.store(false);
    if (t_engine_callbacks == 0) go_idle(session);
    return false;
  }
  if (send_message(session.socket, message, size, fds, nfds) == 0) return true;
  session.active.store(false);
  if (t_engine_callbacks == 0) go_idle(session);
  return false;
}

void go_idle(Session& session) {
  session.active.store(false);
  if (session.stopped.exchange(true)) return;
  // shutdown, not close: another thread may be sending on this descriptor right now. Only while
  // it is still the agent's.
  if (heard(session) &&
      (!support::owns_descriptor(session.socket) || support::still_ours(session.socket))) {
    shutdown(session.socket, SHUT_RDWR);
  }
  close_all_threads();
}

ScopedEngineCallback::ScopedEngineCallback() {
  ++t_engine_callbacks;
}

ScopedEngineCallback::~ScopedEngineCallback() {
  --t_engine_callbacks;
}

// Cached per thread (support::current_tid): also what tells a vfork child (send_exec_notice).
pid_t current_thread_id() {
  return support::current_tid();
}

void announce_comm(pid_t tid, const char* name) {
  Session* session = current_session();
  // Not heard yet: the recorder reads the names when it is.
  if (session == nullptr || !heard(*session) || tid <= 0 || name == nullptr) return;
  CommMessage message;
  message.pid = session->pid;
  message.tid = tid;
  message.time = monotonic_ns();
  std::strncpy(message.comm, name, sizeof message.comm - 1);
  send(*session, &message, sizeof message);
}

}  // namespace userperf::record::agent
