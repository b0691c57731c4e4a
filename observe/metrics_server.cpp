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

#include <algorithm>
#include <chrono>
#include <vector>

namespace actorps {

namespace {

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
  // One loop over the listening socket and every client, none blocking: a client that dribbles
  // its request, or reads its answer slowly, holds only its own slot until its deadline.
  struct client {
    int fd;
    std::chrono::steady_clock::time_point deadline;
    std::string request;
    std::string answer; // (empty while the request is still arriving)
    size_t sent = 0;
  };
  std::vector<client> clients;
  std::vector<pollfd> polled;
  while (!stopping_) {
    polled.clear();
    for (auto& c : clients)
      polled.push_back({c.fd, static_cast<short>(c.answer.empty() ? POLLIN : POLLOUT), 0});
    if (clients.size() < max_clients) // (when full, new connections wait in the backlog)
      polled.push_back({fd_, POLLIN, 0});
    ::poll(polled.data(), polled.size(), 200);
    const auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < clients.size(); ++i) {
      auto& c = clients[i];
      const short got = polled[i].revents;
      bool over = now >= c.deadline || (got & (POLLERR | POLLHUP | POLLNVAL)) != 0;
      if (!over && (got & POLLIN) != 0) {
        char buf[1024];
        auto n = ::recv(c.fd, buf, sizeof(buf), 0);
        if (n <= 0) {
          over = n == 0 || (errno != EAGAIN && errno != EINTR);
        } else {
          c.request.append(buf, static_cast<size_t>(n));
          if (c.request.find("\r\n\r\n") != std::string::npos || c.request.size() >= 8192)
            c.answer = answer_to(c.request);
        }
      }
      if (!over && (got & POLLOUT) != 0) {
        auto n = ::send(c.fd, c.answer.data() + c.sent, c.answer.size() - c.sent, MSG_NOSIGNAL);
        if (n > 0)
          c.sent += static_cast<size_t>(n);
        over = c.sent == c.answer.size() || (n < 0 && errno != EAGAIN && errno != EINTR);
      }
      if (over) {
        ::close(c.fd);
        c.fd = -1;
      }
    }
    clients.erase(std::remove_if(clients.begin(), clients.end(), [](const client& c) { return c.fd < 0; }), clients.end());
    if (polled.size() > clients.size() && (polled.back().fd == fd_) && (polled.back().revents & POLLIN) != 0) {
      int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0)
        clients.push_back({fd, now + client_deadline, {}, {}, 0});
    }
  }
  for (auto& c : clients)
    ::close(c.fd);
}

std::string metrics_server::answer_to(const std::string& request) {
  const bool metrics = request.rfind("GET /metrics ", 0) == 0 || request.rfind("GET /metrics?", 0) == 0;
  if (metrics)
    return response("200 OK", "text/plain; version=0.0.4; charset=utf-8", body_());
  return response("404 Not Found", "text/plain", "only GET /metrics is served here\n");
}

} // namespace actorps
