// Exit watchdog: a sleeping detached thread.
#include "node/exit_watchdog.hpp"

#include "common/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <thread>

namespace actorps {

void arm_exit_watchdog(int code, std::chrono::milliseconds grace) {
  std::thread{[code, grace] {
    std::this_thread::sleep_for(grace);
    log_line("node", cat("the actor system did not shut down within ", grace.count(), " ms after the node finished; "
                         "exiting with code ", code));
    std::fflush(nullptr);
    std::_Exit(code);
  }}.detach();
}

} // namespace actorps
