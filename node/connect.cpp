// Connect-with-retry and publish over the middleman.
#include "node/connect.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "node/peer_probe.hpp"
#include "node/sigterm_watch.hpp"

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/function_view.hpp>
#include <caf/openssl/manager.hpp>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

namespace actorps {

namespace {

// One try: the middleman's connect (the TLS one's with tls) with a deadline, then the checks of
// CAF's remote_actor: an actor is published there, and it has Handle's interface.
template <class Handle>
caf::expected<Handle> attempt(caf::actor_system& sys, const endpoint& ep, std::chrono::milliseconds deadline,
                              bool tls) {
  if (tls)
    if (auto err = probe_tls_peer(ep, deadline))
      return err;
  auto mm = tls ? sys.openssl_manager().actor_handle() : sys.middleman().actor_handle();
  auto f = caf::make_function_view(mm, caf::duration{deadline});
  auto x = f(caf::connect_atom_v, ep.host, ep.port);
  if (!x)
    return std::move(x.error());
  auto& ptr = std::get<1>(*x);
  if (!ptr)
    return caf::make_error(caf::sec::no_actor_published_at_port);
  if (!sys.assignable(std::get<2>(*x), sys.message_types<Handle>()))
    return caf::make_error(caf::sec::unexpected_actor_messaging_interface);
  return caf::actor_cast<Handle>(std::move(ptr));
}

// Whether binding ep fails because another socket listens there (CAF only says "tcp socket
// creation failed").
bool in_use(const endpoint& ep) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  auto port = std::to_string(ep.port);
  if (ep.port == 0 || ::getaddrinfo(ep.host.empty() ? nullptr : ep.host.c_str(), port.c_str(), &hints, &found) != 0)
    return false;
  bool used = false;
  for (auto* a = found; a && !used; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0)
      continue;
    int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    used = ::bind(fd, a->ai_addr, a->ai_addrlen) != 0 && errno == EADDRINUSE;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return used;
}

} // namespace

template <class Handle>
caf::expected<Handle> connect_to(caf::actor_system& sys, const endpoint& ep, const std::string& who,
                                 const std::string& what, std::chrono::milliseconds timeout, bool tls,
                                 bool starting) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto next_log = start;
  auto backoff = std::chrono::milliseconds(100);
  for (;;) {
    // An attempt waits for the handshake at most until the deadline: CAF's remote_actor waits
    // forever for a peer that accepts the connection and then says nothing.
    auto left = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(start + timeout - clock::now()),
                         std::chrono::milliseconds(1000));
    auto hdl = attempt<Handle>(sys, ep, left, tls);
    if (!hdl && hdl.error() == errc::timeout) // the TLS probe: nothing answered the ClientHello
      hdl = caf::make_error(caf::sec::request_timeout);
    if (hdl)
      return std::move(*hdl);
    if (hdl.error() == caf::sec::unexpected_actor_messaging_interface)
      return caf::make_error(errc::protocol_error, cat(who, ": the actor at ", ep.str(), " is not a ", what,
                                                       " (check the cluster spec)"));
    if (hdl.error() == caf::sec::request_timeout)
      return caf::make_error(errc::peer_unreachable,
                             cat(who, ": ", what, " at ", ep.str(), " accepted the connection but completed no",
                                 tls ? " TLS and" : "", " CAF handshake within ",
                                 std::chrono::duration_cast<std::chrono::seconds>(timeout).count(),
                                 " s (cluster.connect-timeout): is another program listening there?"));
    auto now = clock::now();
    if (now - start >= timeout) {
      std::string why;
      if (tls && hdl.error() == caf::sec::disconnect_during_handshake) {
        auto& cfg = sys.config();
        why = explain_tls_refusal(ep, {cfg.openssl_certificate, cfg.openssl_key, cfg.openssl_cafile,
                                       cfg.openssl_passphrase}, std::chrono::seconds(5));
      }
      return caf::make_error(errc::peer_unreachable,
                             cat(who, ": ", what, " at ", ep.str(), " did not answer within ",
                                 std::chrono::duration_cast<std::chrono::seconds>(timeout).count(),
                                 " s (cluster.connect-timeout); last error: ", caf::to_string(hdl.error()),
                                 why.empty() ? "" : cat("; TLS: ", why)));
    }
    if (now >= next_log) {
      log_line(who, cat("waiting for ", what, " at ", ep.str()));
      next_log = now + std::chrono::seconds(5);
    }
    for (auto slept = std::chrono::milliseconds(0); slept < backoff; slept += std::chrono::milliseconds(50)) {
      if (starting && stop_signalled()) // (a node told to stop while it starts waits no longer)
        return caf::make_error(errc::terminated, cat(who, ": stopped by SIGTERM while waiting for ", what, " at ", ep.str()));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
}

template caf::expected<parameter_shard_actor>
connect_to<parameter_shard_actor>(caf::actor_system&, const endpoint&, const std::string&,
                                  const std::string&, std::chrono::milliseconds, bool, bool);
template caf::expected<resource_container_actor>
connect_to<resource_container_actor>(caf::actor_system&, const endpoint&, const std::string&,
                                     const std::string&, std::chrono::milliseconds, bool, bool);
template caf::expected<chief_actor>
connect_to<chief_actor>(caf::actor_system&, const endpoint&, const std::string&, const std::string&,
                        std::chrono::milliseconds, bool, bool);
template caf::expected<worker_replica_actor>
connect_to<worker_replica_actor>(caf::actor_system&, const endpoint&, const std::string&, const std::string&,
                                 std::chrono::milliseconds, bool, bool);

template <class Handle>
caf::expected<uint16_t> publish_at(caf::actor_system& sys, const Handle& hdl, const endpoint& ep,
                      const std::string& what, bool tls) {
  auto port = tls ? caf::openssl::publish(hdl, ep.port, ep.host.c_str(), true)
                  : sys.middleman().publish(hdl, ep.port, ep.host.c_str(), true);
  if (!port)
    return caf::make_error(errc::peer_unreachable,
                           cat("cannot publish the ", what, " at ", ep.str(), ": ",
                               in_use(ep) ? cat(ep.str(), " is in use (another node or program listens there: a node of "
                                                          "a run still going? cluster.* lists each node's port)")
                                          : caf::to_string(port.error())));
  log_line(what, cat("listening at ", endpoint{ep.host, *port}.str(), tls ? " (TLS)" : ""));
  return *port;
}

template caf::expected<uint16_t>
publish_at<parameter_shard_actor>(caf::actor_system&, const parameter_shard_actor&, const endpoint&,
                                  const std::string&, bool);
template caf::expected<uint16_t>
publish_at<resource_container_actor>(caf::actor_system&, const resource_container_actor&, const endpoint&,
                                     const std::string&, bool);
template caf::expected<uint16_t>
publish_at<chief_actor>(caf::actor_system&, const chief_actor&, const endpoint&, const std::string&, bool);
template caf::expected<uint16_t>
publish_at<worker_replica_actor>(caf::actor_system&, const worker_replica_actor&, const endpoint&,
                                 const std::string&, bool);

} // namespace actorps
