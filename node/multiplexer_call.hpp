// Running a step on CAF's multiplexer thread and waiting until it ran, and the stream handlers
// (sockets, ports) still in a multiplexer's loop: CAF's multiplexer runs while any handler is
// registered and knows only its own brokers, so a stream handler still there when the actor
// system stops it keeps its thread (and the process) alive for ever, and a removal dispatched
// after the middleman began to stop never runs. Whoever ends an actor system that ran streams
// calls close_stream_handlers first (node/run_node.cpp, the tests, the benches).
#pragma once

#include <caf/actor_system.hpp>
#include <caf/io/network/default_multiplexer.hpp>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <thread>

namespace actorps {

/// Runs f on mpx's thread (at once when called there) and waits for it, at most `patience`.
inline void run_on_multiplexer(caf::io::network::default_multiplexer& mpx, std::function<void()> f,
                               std::chrono::milliseconds patience = std::chrono::seconds(5)) {
  if (std::this_thread::get_id() == mpx.thread_id())
    return f();
  auto done = std::make_shared<std::promise<void>>();
  auto ran = done->get_future();
  mpx.dispatch([f = std::move(f), done] {
    f();
    done->set_value();
  });
  ran.wait_for(patience);
}

/// Registers a stream handler's close (called at most once more, by close_stream_handlers).
void track_stream_handler(caf::io::network::default_multiplexer& mpx, std::weak_ptr<void> owner,
                          std::function<void()> close);

/// Closes every stream handler of sys's multiplexer that is still alive, each waiting until it
/// left the loop. Call before the actor system ends.
void close_stream_handlers(caf::actor_system& sys);

} // namespace actorps
