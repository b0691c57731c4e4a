// Listening with getaddrinfo + bind + listen (SO_REUSEADDR), accepting with accept4 until the
// backlog is empty.
#include "node/tensor_stream_listener.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "node/local_stream_socket.hpp"
#include "node/multiplexer_call.hpp"

#include <caf/io/middleman.hpp>
#include <caf/io/network/default_multiplexer.hpp>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace actorps {

using caf::io::network::default_multiplexer;
using caf::io::network::operation;

namespace {

caf::error unreachable(const std::string& host, uint16_t port, const std::string& why) {
  return caf::make_error(errc::peer_unreachable, cat("tensor stream port at ", host, ":", port, ": ", why));
}

std::string address_of(const sockaddr_storage& addr) {
  char name[INET6_ADDRSTRLEN] = {};
  uint16_t port = 0;
  if (addr.ss_family == AF_INET) {
    auto& a = reinterpret_cast<const sockaddr_in&>(addr);
    ::inet_ntop(AF_INET, &a.sin_addr, name, sizeof name);
    port = ntohs(a.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
    ::inet_ntop(AF_INET6, &a.sin6_addr, name, sizeof name);
    port = ntohs(a.sin6_port);
  }
  return cat(name, ":", port);
}

} // namespace

caf::expected<std::shared_ptr<tensor_stream_listener>>
tensor_stream_listener::start(caf::actor_system& sys, const std::string& host, uint16_t port, accept_fn accepted) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found); rc != 0)
    return unreachable(host, port, ::gai_strerror(rc));
  std::string why = "no address";
  int fd = -1;
  for (auto* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0)
    return unreachable(host, port, why);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  const uint16_t actual = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6&>(bound).sin6_port)
                                                      : ntohs(reinterpret_cast<sockaddr_in&>(bound).sin_port);
  return watch(sys, fd, actual, "", std::move(accepted));
}

caf::expected<std::shared_ptr<tensor_stream_listener>> tensor_stream_listener::start_local(caf::actor_system& sys,
                                                                                         accept_fn accepted) {
  auto l = listen_local();
  if (!l)
    return std::move(l.error());
  return watch(sys, l->fd, 0, l->name, std::move(accepted));
}

std::shared_ptr<tensor_stream_listener> tensor_stream_listener::watch(caf::actor_system& sys, int fd, uint16_t port,
                                                                      std::string local, accept_fn accepted) {
  auto& mpx = static_cast<default_multiplexer&>(sys.middleman().backend());
  auto l = std::make_shared<tensor_stream_listener>(mpx, fd, port, std::move(local), std::move(accepted));
  track_stream_handler(mpx, l, [weak = std::weak_ptr<tensor_stream_listener>(l)] {
    if (auto live = weak.lock())
      live->close();
  });
  mpx.dispatch([l] {
    l->self_ = l;
    l->activate();
  });
  return l;
}

tensor_stream_listener::tensor_stream_listener(default_multiplexer& mpx, int fd, uint16_t port, std::string local,
                                               accept_fn accepted)
  : event_handler(mpx, fd), port_(port), local_(std::move(local)), accepted_(std::move(accepted)) {
}

void tensor_stream_listener::handle_event(operation op) {
  if (op != operation::read || !open_)
    return;
  for (;;) {
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    const int c = ::accept4(fd(), reinterpret_cast<sockaddr*>(&from), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      return; // (EAGAIN: the backlog is empty; anything else: the next event tries again)
    }
    if (!local_.empty()) {
      if (!same_user(c)) { // (its streams may go without TLS: this user's processes only)
        ::close(c);
        continue;
      }
      widen_local_buffers(c);
      accepted_(c, local_peer_of(c));
    } else {
      accepted_(c, address_of(from));
    }
  }
}

void tensor_stream_listener::close() { // (waits, once: see node/multiplexer_call.hpp)
  if (closing_.exchange(true))
    return;
  run_on_multiplexer(backend(), [self = shared_from_this()] { self->stop(); });
}

void tensor_stream_listener::graceful_shutdown() {
  stop();
}

void tensor_stream_listener::stop() {
  if (!open_)
    return;
  open_ = false;
  backend().del(operation::read, fd(), this);
  ::shutdown(fd(), SHUT_RDWR);
}

void tensor_stream_listener::removed_from_loop(operation) {
  if (eventbf() == 0 && self_)
    backend().post([last = std::move(self_)] {});
}

} // namespace actorps
