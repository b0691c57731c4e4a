// SIGTERM (and SIGINT) to a callback: the handler only bumps a lock-free counter (async-signal-safe); the
// watch's thread polls it. (Blocking the signal instead would not do: threads that exist before
// main, e.g. a BLAS library's, would still take it and end the process.)
#include "node/sigterm_watch.hpp"

#include <chrono>
#include <csignal>

namespace actorps {

namespace {

std::atomic<int> sigterms{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free counter");

extern "C" void count_sigterm(int) {
  sigterms.fetch_add(1);
}

} // namespace

bool stop_signalled() {
  return sigterms.load() > 0;
}

void catch_stop_signals() {
  struct sigaction action {};
  action.sa_handler = count_sigterm;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  // Ctrl-C does what SIGTERM does (also where a script started the node in the background, which
  // leaves SIGINT ignored: the script's Ctrl-C reaches its whole process group)
  sigaction(SIGINT, &action, nullptr);
}

sigterm_watch::sigterm_watch(std::function<void()> on_signal) {
  thread_ = std::thread([this, on_signal = std::move(on_signal)] {
    int seen = sigterms.load();
    while (!done_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      for (int now = sigterms.load(); seen < now; ++seen)
        on_signal();
    }
  });
}

sigterm_watch::~sigterm_watch() {
  done_.store(true);
  thread_.join();
}

} // namespace actorps
