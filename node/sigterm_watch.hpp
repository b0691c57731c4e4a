// A node's clean end on SIGTERM or SIGINT: a handler counts the signal (catch_stop_signals(), once, before
// the node starts) and a thread of the watch sees the count rise and calls back.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace actorps {

/// Installs the handler of SIGTERM and SIGINT (Ctrl-C: the same clean end): from now on neither
/// ends the process; a sigterm_watch acts on each.
void catch_stop_signals();

/// Whether a SIGTERM or SIGINT has come since catch_stop_signals() (a node still starting -- waiting
/// for a peer -- gives up on it). Any thread.
bool stop_signalled();

/// Threading: on_signal runs on the watch's own thread, once per SIGTERM or SIGINT (looked at every 100 ms).
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
