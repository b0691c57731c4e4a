// A worker's clean leave on SIGTERM: the signal is blocked in every thread (block_sigterm(),
// before the actor system starts its threads) and one thread waits for it and calls back.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace actorps {

/// Blocks SIGTERM in the calling thread and every thread it starts afterwards. Call before the
/// actor system exists. Without a sigterm_watch the signal then stays pending (ignored).
void block_sigterm();

/// Threading: on_signal runs on the watch's own thread, once per SIGTERM.
class sigterm_watch {
public:
  explicit sigterm_watch(std::function<void()> on_signal);
  ~sigterm_watch();
  sigterm_watch(const sigterm_watch&) = delete;
  sigterm_watch& operator=(const sigterm_watch&) = delete;

private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

} // namespace actorps
