// Connect-with-retry and publish over the middleman.
#include "node/connect.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/openssl/remote_actor.hpp>

#include <algorithm>
#include <thread>

namespace actorps {

template <class Handle>
caf::expected<Handle> connect_to(caf::actor_system& sys, const endpoint& ep, const std::string& who,
                                 const std::string& what, std::chrono::milliseconds timeout, bool tls) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto next_log = start;
  auto backoff = std::chrono::milliseconds(100);
  for (;;) {
    auto hdl = tls ? caf::openssl::remote_actor<Handle>(sys, ep.host, ep.port)
                   : sys.middleman().remote_actor<Handle>(ep.host, ep.port);
    if (hdl)
      return std::move(*hdl);
    if (hdl.error() == caf::sec::unexpected_actor_messaging_interface)
      return caf::make_error(errc::protocol_error, cat(who, ": the actor at ", ep.str(), " is not a ", what,
                                                       " (check the cluster spec)"));
    auto now = clock::now();
    if (now - start >= timeout)
      return caf::make_error(errc::peer_unreachable,
                             cat(who, ": ", what, " at ", ep.str(), " did not answer within ",
                                 std::chrono::duration_cast<std::chrono::seconds>(timeout).count(),
                                 " s (cluster.connect-timeout); last error: ", caf::to_string(hdl.error())));
    if (now >= next_log) {
      log_line(who, cat("waiting for ", what, " at ", ep.str()));
      next_log = now + std::chrono::seconds(5);
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
}

template caf::expected<parameter_shard_actor>
connect_to<parameter_shard_actor>(caf::actor_system&, const endpoint&, const std::string&,
                                  const std::string&, std::chrono::milliseconds, bool);
template caf::expected<chief_actor>
connect_to<chief_actor>(caf::actor_system&, const endpoint&, const std::string&, const std::string&,
                        std::chrono::milliseconds, bool);
template caf::expected<worker_replica_actor>
connect_to<worker_replica_actor>(caf::actor_system&, const endpoint&, const std::string&, const std::string&,
                                 std::chrono::milliseconds, bool);

template <class Handle>
caf::expected<uint16_t> publish_at(caf::actor_system& sys, const Handle& hdl, const endpoint& ep,
                      const std::string& what, bool tls) {
  auto port = tls ? caf::openssl::publish(hdl, ep.port, ep.host.c_str(), true)
                  : sys.middleman().publish(hdl, ep.port, ep.host.c_str(), true);
  if (!port)
    return caf::make_error(errc::peer_unreachable, cat("cannot publish the ", what, " at ", ep.str(), ": ",
                                                       caf::to_string(port.error())));
  log_line(what, cat("listening at ", endpoint{ep.host, *port}.str(), tls ? " (TLS)" : ""));
  return *port;
}

template caf::expected<uint16_t>
publish_at<parameter_shard_actor>(caf::actor_system&, const parameter_shard_actor&, const endpoint&,
                                  const std::string&, bool);
template caf::expected<uint16_t>
publish_at<chief_actor>(caf::actor_system&, const chief_actor&, const endpoint&, const std::string&, bool);
template caf::expected<uint16_t>
publish_at<worker_replica_actor>(caf::actor_system&, const worker_replica_actor&, const endpoint&,
                                 const std::string&, bool);

} // namespace actorps
