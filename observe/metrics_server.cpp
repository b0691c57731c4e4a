// The /metrics endpoint over plain sockets.
#include "observe/metrics_server.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace actorps {

namespace {

void send_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += static_cast<size_t>(n);
  }
}

std::string response(const char* status, const std::string& type, const std::string& body) {
  return cat("HTTP/1.1 ", status, "\r\nContent-Type: ", type, "\r\nContent-Length: ", body.size(),
             "\r\nConnection: close\r\n\r\n", body);
}

} // namespace

caf::expected<std::unique_ptr<metrics_server>> metrics_server::start(const std::string& address, uint16_t port,
                                                                      std::function<std::string()> body) {
  auto where = cat("node.metrics-port ", port, " at node.metrics-address ", address);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    return caf::make_error(errc::invalid_config, cat(where, ": ", ::gai_strerror(rc)));
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> list{found, ::freeaddrinfo};
  int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return caf::make_error(errc::invalid_config, cat(where, ": ", std::strerror(errno)));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
    auto why = std::strerror(errno);
    ::close(fd);
    return caf::make_error(errc::invalid_config, cat(where, ": cannot listen (", why, ")"));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  uint16_t actual = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                                : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return std::unique_ptr<metrics_server>{new metrics_server(fd, actual, std::move(body))};
}

metrics_server::metrics_server(int fd, uint16_t port, std::function<std::string()> body)
  : fd_(fd), port_(port), body_(std::move(body)) {
  thread_ = std::thread{[this] { serve(); }};
}

metrics_server::~metrics_server() {
  stopping_ = true;
  if (thread_.joinable())
    thread_.join();
  ::close(fd_);
}

void metrics_server::serve() {
  while (!stopping_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0)
      continue;
    int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0)
      continue;
    answer(client);
    ::close(client);
  }
}

void metrics_server::answer(int client) {
  std::string request;
  char buf[1024];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 8192) {
    pollfd p{client, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0)
      return;
    auto n = ::recv(client, buf, sizeof(buf), 0);
    if (n <= 0)
      return;
    request.append(buf, static_cast<size_t>(n));
  }
  const bool metrics = request.rfind("GET /metrics ", 0) == 0 || request.rfind("GET /metrics?", 0) == 0;
  if (metrics)
    send_all(client, response("200 OK", "text/plain; version=0.0.4; charset=utf-8", body_()));
  else
    send_all(client, response("404 Not Found", "text/plain", "only GET /metrics is served here\n"));
}

} // namespace actorps
