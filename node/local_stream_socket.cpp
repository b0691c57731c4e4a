// socket(AF_UNIX, SOCK_STREAM) bound at "\0name" (the abstract namespace), SO_SNDBUFFORCE before
// SO_SNDBUF, SO_PEERCRED for the peer's pid.
#include "node/local_stream_socket.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace actorps {

namespace {

// The address of `name` in the abstract namespace, and its length.
std::pair<sockaddr_un, socklen_t> address_of(const std::string& name) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const size_t n = std::min(name.size(), sizeof addr.sun_path - 1);
  std::memcpy(addr.sun_path + 1, name.data(), n); // (sun_path[0] stays 0: abstract)
  return {addr, static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n)};
}

caf::error unreachable(const std::string& name, const std::string& why) {
  return caf::make_error(errc::peer_unreachable, cat("local tensor stream socket @", name, ": ", why));
}

void set_buffer(int fd, int force, int plain) {
  const int bytes = local_stream_buffer_bytes;
  if (::setsockopt(fd, SOL_SOCKET, force, &bytes, sizeof bytes) != 0)
    ::setsockopt(fd, SOL_SOCKET, plain, &bytes, sizeof bytes);
}

} // namespace

caf::expected<local_listening> listen_local() {
  std::random_device rd;
  const uint64_t tag = (uint64_t{rd()} << 32) ^ rd();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(tag));
  local_listening out{-1, cat("actorps-stream-", hex)};
  out.fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (out.fd < 0)
    return unreachable(out.name, std::strerror(errno));
  auto [addr, len] = address_of(out.name);
  if (::bind(out.fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(out.fd, 128) != 0) {
    auto why = std::strerror(errno);
    ::close(out.fd);
    return unreachable(out.name, why);
  }
  return out;
}

caf::expected<int> connect_local(const std::string& name) {
  if (name.empty() || name.size() >= sizeof(sockaddr_un::sun_path) - 1)
    return unreachable(name, "not a local socket's name");
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return unreachable(name, std::strerror(errno));
  widen_local_buffers(fd);
  auto [addr, len] = address_of(name);
  // (a Unix socket connects at once or not at all: EAGAIN means its backlog is full)
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    auto why = std::strerror(errno);
    ::close(fd);
    return unreachable(name, why);
  }
  if (!same_user(fd)) {
    ::close(fd);
    return unreachable(name, cat("its listener runs as another user than this process (uid ", ::geteuid(), ")"));
  }
  return fd;
}

void widen_local_buffers(int fd) {
  set_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF);
  set_buffer(fd, SO_RCVBUFFORCE, SO_RCVBUF);
}

std::string local_peer_of(int fd) {
  const int pid = local_pid_of(fd);
  return pid > 0 ? cat("this host (pid ", pid, ")") : std::string{"this host"};
}

int local_pid_of(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.pid : 0;
}

bool same_user(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == ::geteuid();
}

int send_buffer_of(int fd) {
  int bytes = 0;
  socklen_t len = sizeof bytes;
  ::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, &len);
  return bytes;
}

} // namespace actorps
