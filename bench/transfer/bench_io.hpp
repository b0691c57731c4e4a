// What actorps-bench-transfer's measurements share: the bytes each way, blocking sockets on
// 127.0.0.1 or the same host's local socket, rounds per second, and CPU time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace actorps::bench {

/// Bytes each way (BENCH_BYTES=N; default 1 MiB).
extern const size_t payload;

using clock_type = std::chrono::steady_clock;

/// A listening TCP socket on 127.0.0.1 at a free port (written to `port`).
int listen_on_free_port(uint16_t& port);

/// A socket connected to 127.0.0.1:port.
int connect_to_port(uint16_t port);

/// Sends (write) or receives all n bytes at buf; false when the peer went.
bool full_io(int fd, char* buf, size_t n, bool write);

// Calls round() until about `seconds` have passed or it returns false; rounds per second.
template <class F>
double rounds_per_second(double seconds, F round) {
  long rounds = 0;
  auto t0 = clock_type::now();
  double dt = 0;
  bool more = true;
  do {
    more = round();
    ++rounds;
    dt = std::chrono::duration<double>(clock_type::now() - t0).count();
  } while (more && dt < seconds);
  return static_cast<double>(rounds) / dt;
}

// A listening socket on 127.0.0.1, or with `local` a same-host local socket (blocking); where
// to connect: its port or name.
struct bench_listener {
  int fd = -1;
  uint16_t port = 0;
  std::string name;
};

/// Makes a bench_listener (exits, saying why, when the local socket cannot be made).
bench_listener listen_for(bool local);

/// A blocking connection to what listen_for made.
int connect_for(const bench_listener& l);

/// CPU seconds of this process and of its children waited for, user and system.
double cpu_seconds();

} // namespace actorps::bench
