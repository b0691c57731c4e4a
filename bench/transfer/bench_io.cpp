// See bench_io.hpp.
#include "bench/transfer/bench_io.hpp"

#include "node/local_stream_socket.hpp"
#include "common/errc.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>

namespace actorps::bench {

const size_t payload = std::getenv("BENCH_BYTES") ? std::strtoul(std::getenv("BENCH_BYTES"), nullptr, 10) : size_t{1} << 20;

namespace {

// 127.0.0.1:port (0: any free port, at bind).
sockaddr_in loopback(uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

} // namespace

int listen_on_free_port(uint16_t& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = loopback(0);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::listen(fd, 1);
  port = ntohs(addr.sin_port);
  return fd;
}

// A socket connected to 127.0.0.1:port.
int connect_to_port(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = loopback(port);
  ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  return fd;
}

bool full_io(int fd, char* buf, size_t n, bool write) {
  size_t done = 0;
  while (done < n) {
    ssize_t k = write ? ::send(fd, buf + done, n - done, 0) : ::recv(fd, buf + done, n - done, 0);
    if (k <= 0)
      return false;
    done += static_cast<size_t>(k);
  }
  return true;
}

bench_listener listen_for(bool local) {
  bench_listener out;
  if (!local) {
    out.fd = listen_on_free_port(out.port);
    return out;
  }
  auto l = listen_local();
  if (!l) {
    std::fprintf(stderr, "%s\n", describe(l.error()).c_str());
    std::exit(1);
  }
  out.fd = l->fd;
  out.name = l->name;
  ::fcntl(out.fd, F_SETFL, ::fcntl(out.fd, F_GETFL) & ~O_NONBLOCK);
  return out;
}

// A blocking connection to what listen_for made.
int connect_for(const bench_listener& l) {
  if (l.name.empty())
    return connect_to_port(l.port);
  auto c = connect_local(l.name);
  if (!c)
    std::exit(1);
  ::fcntl(*c, F_SETFL, ::fcntl(*c, F_GETFL) & ~O_NONBLOCK);
  return *c;
}

// CPU seconds of this process and of its children waited for, user and system.
double cpu_seconds() {
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  rusage self{}, children{};
  ::getrusage(RUSAGE_SELF, &self);
  ::getrusage(RUSAGE_CHILDREN, &children);
  return seconds(self.ru_utime) + seconds(self.ru_stime) + seconds(children.ru_utime) + seconds(children.ru_stime);
}

} // namespace actorps::bench
