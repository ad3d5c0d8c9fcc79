// HASH and LRU_HASH under concurrent consumers and programs: worker threads update, look up and
// delete their own keys through the consumer side while another thread interrupts them with
// SIGUSR1, whose handler runs program-side operations on the interrupted thread (the overflow
// path's situation). Keys of different threads share buckets, so handlers land inside bucket
// locks their own thread holds: those operations must return -EBUSY or succeed, never deadlock.
// Afterwards the map must match what every thread did (HASH) or be a subset of it (LRU_HASH).
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "map_test_util.hpp"

namespace userperf::bpf {
namespace {

constexpr int kThreads = 4;
constexpr std::uint32_t kMainKeys = 16;    // per thread, used by the thread's own code
constexpr std::uint32_t kHandlerKeys = 8;  // per thread, used by its signal handler
constexpr std::uint32_t kMaxEntries = 64;  // fewer than the 96 keys: inserts can find it full
constexpr int kOpsPerThread = 6000;

// A value names its key, so a lookup can tell a value from another key's.
std::uint64_t value_for(std::uint32_t key, std::uint32_t version) {
  return (std::uint64_t{key} << 32) | version;
}

// What one thread believes about its keys: key -> value, absent when deleted.
using Model = std::map<std::uint32_t, std::uint64_t>;

// The handler's model: fixed storage, since a signal handler must not allocate.
struct HandlerModel {
  std::uint64_t values[kHandlerKeys] = {};
  bool present[kHandlerKeys] = {};
};

struct ThreadState {
  std::uint32_t first_key = 0;
  Model main_model;            // written by the thread's own code only
  HandlerModel handler_model;  // written by its signal handler only (SIGUSR1 does not nest)
  std::uint32_t handler_version = 0;
  std::atomic<std::uint64_t> handler_runs{0};  // read by the thread's own code
  std::uint64_t handler_busy = 0;
  bool bad_handler_result = false;
};

constexpr std::uint64_t kMinHandlerRuns = 300;  // per thread, before it may stop
constexpr auto kMaxRunTime = std::chrono::seconds(20);

Map* g_map = nullptr;
bool g_lru = false;
thread_local ThreadState* t_state = nullptr;

bool is_full_error(long err) {
  return err == (g_lru ? -ENOMEM : -E2BIG);
}

void on_sigusr1(int) {
  ThreadState* state = t_state;
  if (state == nullptr || g_map == nullptr) return;
  state->handler_runs.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t version = ++state->handler_version;
  const std::uint32_t slot = (version / 3) % kHandlerKeys;
  const std::uint32_t key = state->first_key + kMainKeys + slot;
  HandlerModel& model = state->handler_model;
  long result = 0;
  switch (version % 3) {
    case 0: {  // lookup: a key holds its own last value
      void* value = g_map->lookup(&key);
      // An LRU element can be evicted and refilled by another thread at any time: read values
      // only of HASH, where only this handler writes this key.
      if (value != nullptr && !g_lru) {
        std::uint64_t read;
        std::memcpy(&read, value, sizeof(read));
        if (!model.present[slot] || model.values[slot] != read) state->bad_handler_result = true;
      } else if (model.present[slot] && !g_lru) {
        // Not found only when the bucket was busy; a nested lookup cannot tell it apart.
        ++state->handler_busy;
      }
      return;
    }
    case 1: {
      const std::uint64_t value = value_for(key, version);
      result = g_map->update(&key, &value, BPF_ANY);
      if (result == 0) {
        model.values[slot] = value;
        model.present[slot] = true;
      }
      break;
    }
    default:
      result = g_map->remove(&key);
      if (result == 0) model.present[slot] = false;
      if (result == -ENOENT && model.present[slot]) {
        if (g_lru) {
          model.present[slot] = false;  // evicted
        } else {
          state->bad_handler_result = true;
        }
      }
      break;
  }
  if (result == -EBUSY) {
    ++state->handler_busy;
  } else if (result != 0 && result != -ENOENT && !is_full_error(result)) {
    state->bad_handler_result = true;
  }
}

void worker(ThreadState& state, std::atomic<int>& errors) {
  t_state = &state;
  std::mt19937 random(state.first_key + 1);
  const auto deadline = std::chrono::steady_clock::now() + kMaxRunTime;
  for (int op = 0; op < kOpsPerThread ||
                   (state.handler_runs.load(std::memory_order_relaxed) < kMinHandlerRuns &&
                    std::chrono::steady_clock::now() < deadline);
       ++op) {
    const std::uint32_t key = state.first_key + random() % kMainKeys;
    Model& model = state.main_model;
    switch (random() % 3) {
      case 0: {
        std::uint64_t value = 0;
        int err = g_map->lookup_elem(&key, &value);
        if (err == 0 && value >> 32 != key) ++errors;             // another key's value
        if (err == 0 && !g_lru && model[key] != value) ++errors;  // not the last write
        if (err == -ENOENT && !g_lru && model.count(key)) ++errors;
        if (err != 0 && err != -ENOENT) ++errors;
        break;
      }
      case 1: {
        const std::uint64_t value = value_for(key, static_cast<std::uint32_t>(op));
        int err = g_map->update_elem(&key, &value, BPF_ANY);
        if (err == 0) {
          model[key] = value;
        } else if (!is_full_error(err)) {
          ++errors;
        }
        break;
      }
      default: {
        int err = g_map->delete_elem(&key);
        if (err == 0) {
          model.erase(key);
        } else if (err != -ENOENT || (!g_lru && model.count(key))) {
          ++errors;
        }
        break;
      }
    }
  }
  // Block the signal before the state goes away with the thread.
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &block, nullptr);
  t_state = nullptr;
}

void run_concurrently(std::uint32_t type) {
  auto created = Map::create(test::make_spec(type, 4, 8, kMaxEntries));
  ASSERT_TRUE(created.ok()) << created.error().message;
  std::unique_ptr<Map> map = std::move(created.value());
  g_map = map.get();
  g_lru = type == BPF_MAP_TYPE_LRU_HASH;

  struct sigaction action {};
  action.sa_handler = on_sigusr1;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  struct sigaction previous {};
  ASSERT_EQ(sigaction(SIGUSR1, &action, &previous), 0);

  std::vector<ThreadState> states(kThreads);
  std::atomic<int> errors{0};
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  std::vector<pthread_t> handles(kThreads);
  std::atomic<int> started{0};
  for (int t = 0; t < kThreads; ++t) {
    states[t].first_key = static_cast<std::uint32_t>(t) * (kMainKeys + kHandlerKeys);
    threads.emplace_back([&, t] {
      handles[t] = pthread_self();
      ++started;
      worker(states[t], errors);
      --running;
    });
  }
  while (started.load() < kThreads) std::this_thread::yield();
  std::thread signaller([&] {
    // Signals only threads still running their loop; a finished thread blocks SIGUSR1 first.
    for (unsigned round = 0; running.load() > 0; ++round) {
      pthread_kill(handles[round % kThreads], SIGUSR1);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  });
  for (auto& thread : threads) thread.join();
  signaller.join();
  sigaction(SIGUSR1, &previous, nullptr);

  EXPECT_EQ(errors.load(), 0);
  std::uint64_t runs = 0, busy = 0;
  Model expected;
  for (const ThreadState& state : states) {
    EXPECT_FALSE(state.bad_handler_result);
    runs += state.handler_runs.load();
    busy += state.handler_busy;
    expected.insert(state.main_model.begin(), state.main_model.end());
    for (std::uint32_t slot = 0; slot < kHandlerKeys; ++slot) {
      if (state.handler_model.present[slot]) {
        expected[state.first_key + kMainKeys + slot] = state.handler_model.values[slot];
      }
    }
  }
  EXPECT_GT(runs, 0u);
  std::printf("%s: %llu program-side runs in signal handlers, %llu busy\n",
              g_lru ? "LRU_HASH" : "HASH", static_cast<unsigned long long>(runs),
              static_cast<unsigned long long>(busy));

  // The final contents: every key once, each with its own last value.
  std::vector<std::uint32_t> keys = test::all_keys(*map);
  EXPECT_LE(keys.size(), kMaxEntries);
  Model actual;
  for (std::uint32_t key : keys) {
    std::uint64_t value = 0;
    ASSERT_EQ(map->lookup_elem(&key, &value), 0) << key;
    EXPECT_TRUE(actual.emplace(key, value).second) << "key " << key << " listed twice";
  }
  if (g_lru) {
    for (const auto& [key, value] : actual) {
      ASSERT_TRUE(expected.count(key)) << "key " << key << " was deleted yet is present";
      EXPECT_EQ(expected[key], value) << key;
    }
  } else {
    EXPECT_EQ(actual, expected);
  }
  // Everything can still be deleted and refilled: no element leaked from the free list.
  for (std::uint32_t key : keys) EXPECT_EQ(map->delete_elem(&key), 0);
  for (std::uint32_t key = 0; key < kMaxEntries; ++key) {
    std::uint64_t value = value_for(key, 0);
    EXPECT_EQ(map->update_elem(&key, &value, BPF_NOEXIST), 0) << key;
  }
  g_map = nullptr;
}

TEST(HashMapConcurrency, HashWithNestedPrograms) {
  run_concurrently(BPF_MAP_TYPE_HASH);
}

TEST(HashMapConcurrency, LruHashWithNestedPrograms) {
  run_concurrently(BPF_MAP_TYPE_LRU_HASH);
}

}  // namespace
}  // namespace userperf::bpf
