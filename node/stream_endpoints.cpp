// Wiring sockets, TLS and the stream actors together (see stream_endpoints.hpp).
#include "node/stream_endpoints.hpp"

#include "actors/resource_container.hpp"
#include "actors/shard_link.hpp"
#include "actors/stream_session.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "common/shared_heap.hpp"
#include "control/slicing.hpp"
#include "node/local_stream_socket.hpp"
#include "node/stream_tls.hpp"
#include "node/tensor_stream_listener.hpp"
#include "node/tensor_stream_socket.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace actorps {

namespace {

tls_files node_tls_files(caf::actor_system& sys) {
  auto& c = sys.config();
  return {c.openssl_certificate, c.openssl_key, c.openssl_cafile, c.openssl_passphrase};
}

// The opener of a connected socket: a tensor stream (TLS in `role` when tls) whose events go to
// the owner's notify as notes. Frames ahead of their typed announcement wait for it.
stream_opener opener_of(caf::actor_system& sys, int fd, std::string peer, bool tls, stream_tls::role role,
                        uint64_t cap) {
  return [&sys, fd, peer = std::move(peer), tls, role, cap](stream_notify notify) -> std::shared_ptr<stream_connection> {
    std::unique_ptr<stream_tls> session;
    if (tls) {
      auto made = stream_tls::make(node_tls_files(sys), role, fd);
      if (!made) {
        log_line("tensor stream", cat("with ", peer, ": ", describe(made.error())));
        ::close(fd);
        return nullptr;
      }
      session = std::move(*made);
    }
    auto on_event = [notify](stream_event e) {
      if (e.what == stream_event::kind::received)
        notify(stream_note::received_transfer(e.transfer));
      else if (e.what == stream_event::kind::message)
        notify(stream_note::message_of(e.transfer, e.index, std::move(e.payload)));
      else if (e.what == stream_event::kind::closed)
        notify(stream_note::closed_by(e.error));
    };
    return tensor_stream_socket::start(sys, fd, peer, 4 * cap, on_event, unannounced_frames::hold,
                                       std::move(session));
  };
}

// A blocking TCP connection to host:port within timeout; errors name the address.
caf::expected<int> connect_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  auto unreachable = [&](const std::string& why) {
    return caf::make_error(errc::peer_unreachable, cat("tensor stream port at ", host, ":", port, ": ", why));
  };
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    return unreachable(::gai_strerror(rc));
  std::string why = "no address";
  int fd = -1;
  for (auto* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
      continue;
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = ::poll(&p, 1, static_cast<int>(timeout.count())) == 1 ? 0 : -1;
      int soerr = rc == 0 ? 0 : ETIMEDOUT;
      socklen_t len = sizeof soerr;
      if (rc == 0)
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
      errno = soerr;
      rc = soerr == 0 ? 0 : -1;
    }
    if (rc != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0)
    return unreachable(why);
  return fd;
}

// A ps node's TCP port and, with cluster.local-streams, its same-host local socket.
class stream_ports final : public stream_port {
public:
  stream_ports(std::shared_ptr<stream_port> tcp, std::shared_ptr<stream_port> local, bool local_tls)
    : tcp_(std::move(tcp)), local_(std::move(local)), local_tls_(local_tls) {
  }
  uint16_t port() const override { return tcp_->port(); }
  std::string local_name() const override { return local_ ? local_->local_name() : std::string{}; }
  bool local_tls() const override { return local_tls_; }
  void close() override {
    tcp_->close();
    if (local_)
      local_->close();
  }

private:
  std::shared_ptr<stream_port> tcp_;
  std::shared_ptr<stream_port> local_;
  bool local_tls_;
};

} // namespace

stream_limits stream_limits_of(const cluster_settings& cluster) {
  return {2 * uint64_t{cluster.max_slice_floats} * sizeof(float) + (uint64_t{1} << 20), cluster.stream_min_bytes,
          cluster.local_streams && cluster.local_shared_memory};
}

stream_listen stream_port_at(caf::actor_system& sys, const cluster_settings& cluster, uint32_t index) {
  const std::string host = cluster.ps[index].host;
  const uint16_t at = cluster.stream_port_offset > 0 ? static_cast<uint16_t>(cluster.ps[index].port + cluster.stream_port_offset) : 0;
  const bool tls = cluster.tls;
  const uint64_t cap = stream_limits_of(cluster).max_transfer_bytes;
  const bool local = cluster.local_streams;
  const bool local_tls = tls && cluster.local_streams_tls; // (the local socket never leaves the host)
  return [&sys, host, at, tls, cap, local, local_tls](stream_accept accepted) -> caf::expected<std::shared_ptr<stream_port>> {
    auto on_accept = [&sys, cap, accepted](bool with_tls, bool same_host) {
      return [&sys, cap, accepted, with_tls, same_host](int fd, std::string peer) {
        const int pid = same_host ? local_pid_of(fd) : 0;
        accepted(opener_of(sys, fd, peer, with_tls, stream_tls::role::server, cap), peer, pid);
      };
    };
    auto port = tensor_stream_listener::start(sys, host, at, on_accept(tls, false));
    if (!port)
      return std::move(port.error());
    std::shared_ptr<stream_port> same_host;
    if (local) {
      if (auto l = tensor_stream_listener::start_local(sys, on_accept(local_tls, true)))
        same_host = *l;
      else // (the workers of this host take the port)
        log_line("tensor streams", cat("no local socket: ", describe(l.error())));
    }
    return std::shared_ptr<stream_port>{std::make_shared<stream_ports>(*port, same_host, local_tls)};
  };
}

caf::expected<int> connect_stream_socket(const cluster_settings& cluster, uint32_t s, const stream_offer& offer,
                                         std::string& peer, bool* local) {
  if (local != nullptr)
    *local = false;
  if (cluster.local_streams && !offer.local.empty()) {
    if (auto fd = connect_local(offer.local)) {
      peer = cat("shard ", s, " (", cluster.ps[s].host, ", same host: local socket)");
      if (local != nullptr)
        *local = true;
      return fd;
    } // (another host, another network namespace, or another user's listener: TCP)
  }
  peer = cat("shard ", s, " (", cluster.ps[s].host, ":", offer.port, ")");
  return connect_tcp(cluster.ps[s].host, offer.port, cluster.connect_timeout);
}

namespace {

// The virtual size of a worker process's shared heap: its pages are backed only as pushes first
// write them (a step's pushes in flight, each part's form reused step after step); a push that
// finds no room left travels as frames.
constexpr size_t shared_heap_bytes = size_t{1} << 30;

// Offers the session this process's shared heap (made on the first call); tells the link once the
// session mapped it. Whether it did (a heap that cannot be made or mapped: frames, said in a line).
bool offer_shared_heap(caf::actor_system& sys, const cluster_settings& cluster, const stream_offer& offer,
                       const shard_link_actor& link, const std::string& who) {
  auto heap = shared_heap::of_process(shared_heap_bytes);
  if (!heap) {
    log_line(who, cat("pushes stay frames: ", describe(heap.error())));
    return false;
  }
  const shared_heap_offer mine{offer.token, (*heap)->fd(), (*heap)->bytes()};
  caf::scoped_actor self{sys};
  bool mapped = false;
  self->request(caf::actor_cast<stream_session_actor>(offer.session), cluster.connect_timeout, stream_atom_v, mine)
    .receive([&](bool yes) { mapped = yes; }, [&](caf::error&) {});
  if (mapped)
    caf::anon_send(link, stream_atom_v, mine);
  return mapped;
}

} // namespace

caf::expected<parameter_shard_actor> open_shard_link(caf::actor_system& sys, const cluster_settings& cluster,
                                                     const parameter_shard_actor& remote, uint32_t s, uint32_t worker,
                                                     const std::string& who) {
  auto failed = [&](const std::string& step, const caf::error& err) {
    return caf::make_error(errc::peer_unreachable,
                           cat(who, ": tensor stream to shard ", s, " at ", cluster.ps[s].str(), ": ", step, ": ",
                               describe(err)));
  };
  caf::scoped_actor self{sys};
  caf::expected<stream_offer> offer{caf::make_error(errc::timeout, "no answer")};
  self->request(caf::actor_cast<resource_container_actor>(remote), cluster.request_timeout, stream_atom_v, worker)
    .receive([&](stream_offer& x) { offer = std::move(x); }, [&](caf::error& err) { offer = std::move(err); });
  if (!offer)
    return failed("no offer", offer.error());
  std::string peer;
  bool local = false;
  auto fd = connect_stream_socket(cluster, s, *offer, peer, &local);
  if (!fd)
    return failed("connecting", fd.error());
  const uint64_t cap = stream_limits_of(cluster).max_transfer_bytes;
  // (the local socket speaks TLS where the ps node says so: security.local-streams-tls)
  const bool tls = cluster.tls && (!local || offer->local_tls);
  auto link = make_shard_link(sys, {s, remote, *offer, opener_of(sys, *fd, peer, tls, stream_tls::role::client, cap),
                                    cluster.request_timeout, stream_limits_of(cluster)});
  caf::error acked = caf::make_error(errc::timeout, "no answer");
  self->request(caf::actor_cast<stream_session_actor>(offer->session), cluster.connect_timeout, stream_atom_v,
                offer->token)
    .receive([&](bool) { acked = caf::none; }, [&](caf::error& err) { acked = std::move(err); });
  if (acked) {
    caf::anon_send_exit(link, caf::exit_reason::user_shutdown);
    return failed("the stream was not attached", acked);
  }
  const bool shared = local && !tls && stream_limits_of(cluster).shared_memory
                      && offer_shared_heap(sys, cluster, *offer, link, who);
  log_line(who, cat("tensor stream to ", peer, tls ? " (TLS)" : cluster.tls ? " (not encrypted: it never leaves the host; its listener runs as this user)" : "",
                    !shared                    ? ""
                    : worker == chief_worker_id ? "; the table's rows its evaluations read come through this process's shared memory"
                                                : "; pushes exchange their gradients and values through this process's shared memory"));
  return caf::actor_cast<parameter_shard_actor>(link);
}

} // namespace actorps
