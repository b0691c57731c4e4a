// SIGTERM to a callback, on a thread of its own (sigtimedwait on the blocked signal).
#include "node/sigterm_watch.hpp"

#include <csignal>
#include <ctime>
#include <pthread.h>

namespace actorps {

namespace {

sigset_t sigterm_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  return set;
}

} // namespace

void block_sigterm() {
  auto set = sigterm_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

sigterm_watch::sigterm_watch(std::function<void()> on_signal) {
  thread_ = std::thread([this, on_signal = std::move(on_signal)] {
    auto set = sigterm_set();
    timespec step{0, 200 * 1000 * 1000}; // looks at done_ five times a second
    while (!done_.load())
      if (sigtimedwait(&set, nullptr, &step) == SIGTERM)
        on_signal();
  });
}

sigterm_watch::~sigterm_watch() {
  done_.store(true);
  thread_.join();
}

} // namespace actorps
