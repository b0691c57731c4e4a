// See echoes.hpp.
#include "bench/transfer/echoes.hpp"

#include "bench/transfer/bench_io.hpp"
#include "node/local_stream_socket.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

namespace actorps::bench {

double raw_echo(double seconds, bool local) {
  auto listener = listen_for(local);
  const int lfd = listener.fd;
  pid_t child = ::fork();
  if (child == 0) {
    int fd = ::accept(lfd, nullptr, nullptr);
    if (local)
      widen_local_buffers(fd);
    std::vector<char> buf(payload);
    while (full_io(fd, buf.data(), payload, false) && full_io(fd, buf.data(), payload, true)) {
    }
    ::_exit(0);
  }
  ::close(lfd);
  int fd = connect_for(listener);
  std::vector<char> buf(payload, 'x');
  double rate = rounds_per_second(seconds, [&] {
    full_io(fd, buf.data(), payload, true);
    full_io(fd, buf.data(), payload, false);
    return true;
  });
  ::close(fd);
  ::waitpid(child, nullptr, 0);
  return rate;
}

double shared_memory_echo(double seconds, size_t chunk, bool spin, bool copy_out) {
  struct alignas(64) counter { std::atomic<uint64_t> written{0}; };
  const size_t head = 2 * sizeof(counter);
  void* mem = ::mmap(nullptr, head + 2 * payload, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  int bell[2];
  if (mem == MAP_FAILED || ::socketpair(AF_UNIX, SOCK_STREAM, 0, bell) != 0)
    return 0;
  auto* counters = new (mem) counter[2];
  char* rings = static_cast<char*>(mem) + head;
  struct side { counter* c; char* ring; int fd; uint64_t total = 0; };
  auto send = [&](side& s, const char* src) { // copies src in, announcing each chunk
    for (size_t o = 0; o < payload; o += chunk) {
      const size_t m = std::min(chunk, payload - o);
      std::memcpy(s.ring + o, src + o, m);
      s.c->written.store(s.total + o + m, std::memory_order_release);
      char b = 1;
      if (!spin && ::send(s.fd, &b, 1, MSG_NOSIGNAL) != 1)
        return false;
    }
    s.total += payload;
    return true;
  };
  auto receive = [&](side& s, char* dst) { // copies out what has come, waiting for the rest
    size_t o = 0;
    while (o < payload) {
      uint64_t w;
      while ((w = s.c->written.load(std::memory_order_acquire)) <= s.total + o) {
        char bytes[64];
        if (!spin && ::recv(s.fd, bytes, sizeof bytes, 0) <= 0)
          return false;
      }
      const size_t upto = static_cast<size_t>(std::min<uint64_t>(w - s.total, payload));
      if (copy_out) {
        std::memcpy(dst + o, s.ring + o, upto - o);
      } else { // every cache line read once, in place
        uint64_t sum = 0;
        for (size_t i = o; i + sizeof(uint64_t) <= upto; i += 64)
          sum += *reinterpret_cast<const uint64_t*>(s.ring + i);
        std::memcpy(dst, &sum, sizeof sum);
      }
      o = upto;
    }
    s.total += payload;
    return true;
  };
  pid_t child = ::fork();
  if (child == 0) {
    ::close(bell[0]);
    side in{&counters[0], rings, bell[1]}, out{&counters[1], rings + payload, bell[1]};
    std::vector<char> buf(payload);
    while (receive(in, buf.data()) && send(out, buf.data())) {
    }
    ::_exit(0);
  }
  ::close(bell[1]);
  side out{&counters[0], rings, bell[0]}, in{&counters[1], rings + payload, bell[0]};
  std::vector<char> buf(payload, 'x'), back(payload);
  double rate = rounds_per_second(seconds, [&] { return send(out, buf.data()) && receive(in, back.data()); });
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(bell[0]);
  ::munmap(mem, head + 2 * payload);
  return rate;
}

} // namespace actorps::bench
