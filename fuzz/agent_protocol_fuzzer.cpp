// A hostile agent against the recorder of `userperf record` (src/record/recorder): the input is a
// script of what agents do - connect, send any protocol message (well-formed or not, with ring
// memfds over SCM_RIGHTS), write records into their rings and scribble over them (control page
// included) while the recorder holds the mapping, close - interleaved with passes of the
// recorder's own loop (Recorder::run_until, one iteration), then finish(). Real sockets and
// memfds: the recorder is driven through its public interface, nothing of it is copied.
// Every pid the agents name is above PID_MAX_LIMIT, so no /proc read finds a live process and the
// ticker's pokes find no thread (the run is deterministic and touches nothing).
// What the recorder promises (protocol.hpp: "the recorder checks every size and field before
// use"; thread_ring.hpp: "perf never sees a record that would stop it"), checked per input:
// - no crash, no leak, no descriptor left open (every memfd sent closed or mapped, every
//   connection closed);
// - the perf.data written is read back whole by perfdata::Reader, every record of its data
//   section is walked without error, and every SAMPLE in it names an attr by its id;
// - the SAMPLEs in the file are exactly the ones the recorder counted (stats().samples).
#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "byte_script.hpp"
#include "perfdata/reader.hpp"
#include "perfdata/writer.hpp"
#include "record/protocol.hpp"
#include "record/recorder/event_config.hpp"
#include "record/recorder/recorder.hpp"
#include "ring/ring_memory.hpp"

using namespace userperf;
using namespace userperf::record;

namespace {

constexpr pid_t kFakePidBase = 4194304;  // PID_MAX_LIMIT: never a live process
constexpr std::size_t kPage = 4096;
constexpr int kMaxClients = 4;
constexpr int kMaxRings = 6;
constexpr std::uint64_t kIdRange = std::uint64_t{1} << 32;

[[noreturn]] void broken(const char* what, long long a = 0, long long b = 0) {
  std::fprintf(stderr, "agent_protocol invariant broken: %s (%lld, %lld)\n", what, a, b);
  std::abort();
}

// The three recordings the agents speak to: cpu-clock alone; cpu-clock with frame-pointer
// callchains and a user tracepoint; task-clock with DWARF registers and stack.
const RecordConfig& config(int which) {
  static const RecordConfig configs[3] = {
      [] {
        RecordRequest r;
        r.events = {"cpu-clock"};
        return *build_record_config(r, -1);
      }(),
      [] {
        RecordRequest r;
        r.events = {"cpu-clock", "loop:tick"};
        r.call_graph = CallGraph::kFramePointer;
        return *build_record_config(r, -1);
      }(),
      [] {
        RecordRequest r;
        r.events = {"task-clock"};
        r.call_graph = CallGraph::kDwarf;
        r.stack_size = 64;
        return *build_record_config(r, -1);
      }(),
  };
  return configs[which];
}

// The recorder's listening socket, one for the whole run (the Recorder never closes it).
int listening_socket(sockaddr_un& address, socklen_t& length) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) broken("socket");
  std::memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  const int n = std::snprintf(address.sun_path + 1, sizeof address.sun_path - 1,
                              "userperf-fuzz-agent-%d", static_cast<int>(getpid()));
  length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 || listen(fd, 64) != 0) {
    broken("bind/listen");
  }
  return fd;
}

pid_t fake_pid(fuzz::ByteScript& in) {
  const std::uint8_t raw = in.take<std::uint8_t>();
  if (raw >= 0xfe) return raw == 0xff ? -1 : 0;  // the values the recorder must refuse
  return kFakePidBase + raw;
}

// A ring the agent made: its memfd's pages mapped here too, so the agent can write after sending.
struct AgentRing {
  std::uint8_t* base = nullptr;
  std::size_t length = 0;
  std::uint64_t head = 0;  // where the agent writes its next record
  std::uint64_t ids[2] = {};
  ~AgentRing() {
    if (base != nullptr) munmap(base, length);
  }
  perf_event_mmap_page* control() const { return reinterpret_cast<perf_event_mmap_page*>(base); }
  std::uint8_t* data() const { return base + kPage; }
  std::uint64_t data_size() const { return length - kPage; }
};

struct Client {
  int fd = -1;
  std::uint64_t id_base = 0;  // the recorder's: its connection number * 2^32
  pid_t pid = kFakePidBase;
};

struct Session {
  fuzz::ByteScript& in;
  const RecordConfig& cfg;
  Client clients[kMaxClients];
  int nclients = 0;
  std::unique_ptr<AgentRing> rings[kMaxRings];
  int nrings = 0;
  bool pending = false;  // something happened the recorder's poll will see

  Client* client() {
    if (nclients == 0) return nullptr;
    Client& c = clients[in.range<int>(0, nclients - 1)];
    return c.fd >= 0 ? &c : nullptr;
  }

  void send(Client& c, const void* message, std::size_t size, const int* fds = nullptr,
            int nfds = 0) {
    iovec io{const_cast<void*>(message), size};
    msghdr msg{};
    msg.msg_iov = &io;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 3)];
    if (nfds > 0) {
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
      cmsghdr* cm = CMSG_FIRSTHDR(&msg);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
      std::memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
    }
    // A full socket drops the message: the recorder then simply never sees it.
    // A peer the recorder closed refuses it: then its poll sees nothing new either.
    if (sendmsg(c.fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0) pending = true;
  }

  void connect_client(const sockaddr_un& address, socklen_t length, std::uint64_t& connections) {
    if (nclients == kMaxClients) return;
    const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) broken("socket");
    if (connect(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0) broken("connect");
    // Connections are accepted in connect order and numbered from 1.
    clients[nclients++] = {fd, ++connections * kIdRange, kFakePidBase};
    pending = true;
  }

  void hello(Client& c) {
    HelloMessage m;
    if (in.flag()) m.version = in.take<std::uint32_t>();
    m.pid = fake_pid(in);
    m.ppid = fake_pid(in);
    m.parent_tid = in.flag() ? fake_pid(in) : 0;
    m.time = in.take<std::uint32_t>();
    m.inherits = in.range<std::uint32_t>(0, 1);
    m.attached = in.range<std::uint32_t>(0, 1);
    if (m.pid > 0) c.pid = m.pid;
    send(c, &m, sizeof m);
  }

  void thread_start(Client& c) {
    ThreadStartMessage m;
    m.pid = in.flag() ? c.pid : fake_pid(in);
    m.tid = fake_pid(in);
    m.ptid = in.flag() ? fake_pid(in) : 0;
    m.has_aux = in.range<std::uint32_t>(0, 1);
    m.time = in.take<std::uint32_t>();
    m.nr_events = in.range<std::uint32_t>(0, 3);
    if (in.range<int>(0, 15) == 0) m.nr_events = in.take<std::uint32_t>();
    m.clock_signo = in.take<std::int8_t>();
    std::uint64_t ids[2] = {c.id_base + 1 + nrings * 4, c.id_base + 2 + nrings * 4};
    for (std::uint32_t i = 0; i < m.nr_events && i < kMaxThreadEvents; ++i) {
      m.events[i].config_index = in.range<std::uint32_t>(0, 2);
      m.events[i].clock = in.take<std::uint8_t>();
      // The id the agent was given (its connection's range), or any other.
      m.events[i].id = in.flag() ? in.take<std::uint64_t>() : ids[i % 2];
      if (i < 2) ids[i] = m.events[i].id;
    }
    // The ring: a sealed memfd of a control page and 1, 2 or 4 data pages (or a broken one).
    const std::size_t data_pages = std::size_t{1} << in.range<int>(0, 2);
    const int shape = in.range<int>(0, 7);
    const std::size_t length = (1 + data_pages) * kPage - (shape == 1 ? kPage : 0);
    int fd;
    if (shape == 2) {  // not sealed: the recorder must refuse it
      fd = memfd_create("fuzz-ring", MFD_CLOEXEC);
      if (fd < 0 || ftruncate(fd, static_cast<off_t>(length)) != 0) broken("memfd");
    } else {
      fd = ring::create_ring_memfd("fuzz-ring", length);
      if (fd < 0) broken("create_ring_memfd");
    }
    auto ring = std::make_unique<AgentRing>();
    void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) broken("mmap");
    ring->base = static_cast<std::uint8_t*>(p);
    ring->length = length;
    ring->ids[0] = ids[0];
    ring->ids[1] = ids[1];
    ring->control()->data_offset = kPage;
    ring->control()->data_size = length - kPage;
    if (shape == 3) ring->control()->data_size = in.take<std::uint64_t>();
    int fds[3] = {fd, -1, -1};
    int nfds = 1;
    if (m.has_aux != 0 || shape == 4) fds[nfds++] = memfd_create("fuzz-aux", MFD_CLOEXEC);
    if (shape == 5) nfds = 0;
    send(c, &m, in.flag() ? sizeof m : in.range<std::size_t>(0, sizeof m), fds, nfds);
    for (int i = 0; i < 3; ++i) {
      if (i > 0 && fds[i] >= 0) close(fds[i]);
    }
    close(fd);
    if (nrings < kMaxRings) {
      rings[nrings++] = std::move(ring);
    } else {
      rings[in.range<int>(0, kMaxRings - 1)] = std::move(ring);
    }
  }

  // The agent writes a record into a ring as its output path would, or scribbles.
  void write_ring() {
    if (nrings == 0) return;
    AgentRing& r = *rings[in.range<int>(0, nrings - 1)];
    const std::uint64_t wrap = r.data_size();
    switch (in.range<int>(0, 3)) {
      case 0:
      case 1: {  // a record: header, body from the input, the id where the attr puts it
        perf_event_header header;
        header.type = in.range<std::uint32_t>(0, 20);
        header.misc = PERF_RECORD_MISC_USER;
        header.size = static_cast<std::uint16_t>(8 * in.range<int>(1, 48));
        const std::uint64_t id = r.ids[in.range<int>(0, 1)];
        std::vector<std::uint8_t> bytes(header.size);
        std::memcpy(bytes.data(), &header, sizeof header);
        const std::span<const std::uint8_t> body = in.bytes(in.range<std::size_t>(0, 96));
        std::memcpy(bytes.data() + 8, body.data(),
                    std::min<std::size_t>(body.size(), bytes.size() - 8));
        if (header.size >= 16) {
          const std::size_t at = header.type == PERF_RECORD_SAMPLE ? 8 : header.size - 8;
          std::memcpy(bytes.data() + at, &id, sizeof id);
        }
        if (wrap == 0 || (wrap & (wrap - 1)) != 0) return;
        for (std::size_t i = 0; i < bytes.size(); ++i)
          r.data()[(r.head + i) & (wrap - 1)] = bytes[i];
        r.head += header.size;
        if (in.flag()) r.control()->data_head = r.head;
        break;
      }
      case 2: {  // raw bytes anywhere in the mapping, control page included
        const std::size_t at = in.range<std::size_t>(0, r.length - 1);
        const std::span<const std::uint8_t> bytes = in.bytes(in.range<std::size_t>(0, 32));
        for (std::size_t i = 0; i < bytes.size(); ++i) r.base[(at + i) % r.length] = bytes[i];
        break;
      }
      default:  // a control field
        switch (in.range<int>(0, 3)) {
          case 0:
            r.control()->data_head = in.take<std::uint64_t>();
            break;
          case 1:
            r.control()->data_tail = in.take<std::uint64_t>();
            break;
          case 2:
            r.control()->data_offset = in.take<std::uint64_t>();
            break;
          default:
            r.control()->data_size = in.take<std::uint64_t>();
        }
    }
  }

  void message(Client& c, int type) {
    switch (type) {
      case 0: {
        ThreadExitMessage m;
        m.pid = in.flag() ? c.pid : fake_pid(in);
        m.tid = fake_pid(in);
        m.time = in.take<std::uint32_t>();
        send(c, &m, sizeof m);
        break;
      }
      case 1: {
        CommMessage m;
        m.pid = in.flag() ? c.pid : fake_pid(in);
        m.tid = fake_pid(in);
        m.time = in.take<std::uint32_t>();
        const std::span<const std::uint8_t> name = in.bytes(in.range<std::size_t>(0, 16));
        std::memcpy(m.comm, name.data(), name.size());
        send(c, &m, sizeof m);
        break;
      }
      case 2: {
        ExecNoticeMessage m;
        m.pid = in.flag() ? c.pid : fake_pid(in);
        m.target = in.range<std::uint32_t>(0, 8);
        m.failed = in.range<std::uint32_t>(0, 1);
        const std::span<const std::uint8_t> path = in.bytes(in.range<std::size_t>(0, 256));
        std::memcpy(m.path, path.data(), path.size());
        send(c, &m, sizeof m);
        break;
      }
      case 3: {  // a tracepoint's format, followed by its text
        TracepointMessage m;
        m.config_index = in.range<std::uint32_t>(0, 2);
        const std::span<const std::uint8_t> text = in.bytes(in.range<std::size_t>(0, 512));
        m.format_size = static_cast<std::uint32_t>(text.size());
        if (in.range<int>(0, 7) == 0) m.format_size = in.take<std::uint32_t>();
        std::vector<std::uint8_t> bytes(sizeof m + text.size());
        m.header.size = static_cast<std::uint32_t>(bytes.size());
        std::memcpy(bytes.data(), &m, sizeof m);
        std::memcpy(bytes.data() + sizeof m, text.data(), text.size());
        send(c, bytes.data(), bytes.size());
        break;
      }
      case 4: {
        BusyClockMessage m;
        m.pid = in.flag() ? c.pid : fake_pid(in);
        m.tid = fake_pid(in);
        send(c, &m, sizeof m);
        break;
      }
      case 5: {
        EventCountsMessage m;
        m.pid = in.flag() ? c.pid : fake_pid(in);
        m.tid = fake_pid(in);
        m.time = in.take<std::uint32_t>();
        m.nr_events = in.range<std::uint32_t>(0, 3);
        for (std::uint32_t i = 0; i < m.nr_events; ++i) {
          m.events[i].config_index = in.flag() ? i : in.take<std::uint8_t>();
          m.events[i].id =
              in.flag() ? c.id_base + 1 + in.range<std::uint64_t>(0, 24) : in.take<std::uint64_t>();
          m.events[i].count = in.take<std::uint16_t>();
          m.events[i].lost = in.take<std::uint16_t>();
        }
        send(c, &m, sizeof m);
        break;
      }
      case 6: {
        ProcessExitMessage m;
        m.pid = in.flag() ? c.pid : fake_pid(in);
        m.status = in.take<std::int8_t>();
        m.time = in.take<std::uint32_t>();
        send(c, &m, sizeof m);
        break;
      }
      default: {  // any bytes, any header
        const std::span<const std::uint8_t> bytes = in.bytes(in.range<std::size_t>(0, 300));
        send(c, bytes.data(), bytes.size());
      }
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static sockaddr_un address;
  static socklen_t address_length;
  static const int listen_fd = listening_socket(address, address_length);
  static const int file_fd = memfd_create("fuzz-perf.data", MFD_CLOEXEC);
  static const std::string file_path = "/proc/self/fd/" + std::to_string(file_fd);
  static std::FILE* const log = std::fopen("/dev/null", "w");

  fuzz::ByteScript in(data, size);
  const RecordConfig& cfg = config(in.range<int>(0, 2));
  Expected<std::unique_ptr<perfdata::Writer>> writer = perfdata::Writer::create(file_path);
  if (!writer) broken("Writer::create");
  std::uint64_t connections = 0;
  {
    Recorder recorder(listen_fd, cfg, **writer, log);
    if (!recorder.begin()) broken("begin");
    Session s{in, cfg};
    const auto pump = [&] {
      if (!s.pending) return;  // the recorder's poll would wait its 15 ms for nothing
      s.pending = false;
      if (!recorder.run_until([] { return true; })) broken("run_until failed");
    };
    int steps = 0;
    while (in.remaining() > 0 && ++steps < 256) {
      const int op = in.range<int>(0, 15);
      if (op == 0) {
        s.connect_client(address, address_length, connections);
        continue;
      }
      if (op == 3 || op == 4) {
        s.write_ring();
        continue;
      }
      if (op == 5) {
        pump();
        continue;
      }
      Client* c = s.client();
      if (c == nullptr) continue;
      switch (op) {
        case 1:
          s.hello(*c);
          break;
        case 2:
          s.thread_start(*c);
          break;
        case 6:
          close(c->fd);
          c->fd = -1;
          s.pending = true;
          break;
        default:
          s.message(*c, op - 7);
      }
    }
    pump();
    if (!recorder.finish()) broken("finish failed");
    const std::uint64_t counted = recorder.stats().samples;
    for (int i = 0; i < s.nclients; ++i) {
      if (s.clients[i].fd >= 0) close(s.clients[i].fd);
    }

    // The file, read back.
    struct stat st {};
    if (fstat(file_fd, &st) != 0) broken("fstat");
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(st.st_size));
    if (pread(file_fd, bytes.data(), bytes.size(), 0) != st.st_size) broken("pread");
    Expected<std::unique_ptr<perfdata::Reader>> reader =
        perfdata::Reader::from_bytes(std::move(bytes));
    if (!reader) {
      std::fprintf(stderr, "%s at %llu\n", reader.error().message.c_str(),
                   static_cast<unsigned long long>(reader.error().offset));
      broken("the recorder's perf.data is unreadable");
    }
    perfdata::RecordCursor cursor = (*reader)->records();
    perfdata::RecordView record;
    std::uint64_t samples = 0;
    for (;;) {
      const perfdata::RecordCursor::Next next = cursor.next(record);
      if (next == perfdata::RecordCursor::Next::kEnd) break;
      if (next == perfdata::RecordCursor::Next::kError) {
        std::fprintf(stderr, "%s\n", cursor.error().message.c_str());
        broken("a record of the recorder's perf.data is unreadable", record.offset);
      }
      if (record.header.type == PERF_RECORD_SAMPLE) {
        ++samples;
        if ((*reader)->attr_index(record) < 0) broken("a SAMPLE of no attr", record.offset);
      }
    }
    if (samples != counted) broken("SAMPLEs in the file vs counted", samples, counted);
  }
  // Every ring and AUX memfd the agents sent was closed or mapped and unmapped, and every
  // connection closed: of the descriptors open now, no memfd of an agent and only the listening
  // socket. (libFuzzer may hold pipes of its own, e.g. to llvm-symbolizer.)
  int sockets = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) broken("opendir");
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    char target[64];
    const ssize_t n = readlinkat(dirfd(dir), entry->d_name, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = 0;
    if (std::strncmp(target, "/memfd:fuzz-ring", 16) == 0 ||
        std::strncmp(target, "/memfd:fuzz-aux", 15) == 0) {
      broken("an agent's memfd left open", std::atoi(entry->d_name));
    }
    sockets += std::strncmp(target, "socket:", 7) == 0;
  }
  closedir(dir);
  if (sockets != 1) broken("sockets left open", sockets);
  return 0;
}
