// actorps-bench-transfer: a 1 MiB push + pull round trip between two processes to a ps node, as
// workers send it: over the tensor stream (a ShardLink, cluster.tensor-stream; served from the
// shard's store in place, and the same through the container's and the shard's actors) and over BASP
// (raw-copy tensors inside the typed messages), each over plain TCP and over TLS with mutual
// authentication (certificates from scripts/make-certs.sh), the stream on the same-host local
// socket (cluster.local-streams) and over TCP, versus raw TCP and local-socket echoes of the same
// bytes and the stream's frames alone (node/tensor_stream_socket), measured in one run on
// 127.0.0.1; then the 16-bit wire conversions (encode, decode,
// round) of the same 1 MiB of floats against a memcpy of it, on one thread.
//   actorps-bench-transfer [seconds-per-measurement=3]   (BENCH_BYTES=N: N bytes each way instead;
//   BENCH_ONLY=stream: the plain shard-over-the-stream rows and raw TCP alone, e.g. under perf;
//   BENCH_ONLY=shm: the local-socket echo beside echoes through a shared mapping (issue 48's item 3),
//   each with the CPU time a round costs both processes, and a step's exchange modelled six ways
//   (BENCH_EXCHANGE=N with BENCH_ONLY=shm: way N of exchange_mode alone, 0 the socket);
//   BENCH_STREAM_MIN_BYTES=N: cluster.stream-min-bytes, below which tensors travel inside the messages)
#include "actors/parameter_shard.hpp"
#include "common/memory_policy.hpp"
#include "actors/resource_container.hpp"
#include "messages/register.hpp"
#include "node/caf_defaults.hpp"
#include "node/connect.hpp"
#include "node/local_stream_socket.hpp"
#include "node/multiplexer_call.hpp"
#include "node/stream_endpoints.hpp"
#include "node/tensor_stream_socket.hpp"
#include "wire/precision.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/scoped_actor.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <cstring>
#include <random>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace actorps;

namespace {

const size_t payload = std::getenv("BENCH_BYTES") ? std::strtoul(std::getenv("BENCH_BYTES"), nullptr, 10) : size_t{1} << 20; // bytes each way
// cluster.stream-min-bytes of both ends (BENCH_STREAM_MIN_BYTES=N; default: the option's).
const uint64_t stream_min_bytes = std::getenv("BENCH_STREAM_MIN_BYTES")
                                    ? std::strtoull(std::getenv("BENCH_STREAM_MIN_BYTES"), nullptr, 10)
                                    : cluster_settings{}.stream_min_bytes;
using clock_type = std::chrono::steady_clock;

// With a certificate folder: TLS, presenting node's certificate of the folder's CA.
struct node_config : caf::actor_system_config {
  node_config(const std::string& certs, const std::string& node) {
    load<caf::io::middleman>();
    register_types(*this);
    set_node_caf_defaults(*this); // as actorps-node runs
    set("logger.verbosity", caf::atom("quiet"));
    if (certs.empty())
      return;
    load<caf::openssl::manager>();
    openssl_certificate = certs + "/" + node + ".pem";
    openssl_key = certs + "/" + node + ".key";
    openssl_cafile = certs + "/ca.pem";
  }
};

int listen_on_free_port(uint16_t& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
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
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
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

// Round trips per second of a 1 MiB echo over plain TCP (the child echoes), or with `local` over
// a Unix-domain socket with the buffers a same-host tensor stream asks for.
double raw_echo(double seconds, bool local = false) {
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

// Round trips per second of the same echo through a shared mapping instead of a socket (issue
// 48's same-host path, measured before building it): each side copies its bytes into the mapping
// and the other copies them out (or, without `copy_out`, reads them where they lie, as a shard
// could apply a push), `chunk` bytes at a time. A chunk is announced by a counter in the
// mapping; the reader either sleeps on a local socket pair until a byte says more came (what a
// cluster's processes could afford) or, with `spin`, polls the counter (a core busy per waiting
// reader: the upper bound).
double shared_memory_echo(double seconds, size_t chunk, bool spin, bool copy_out = true) {
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

// A step's exchange with one shard, both ways, modelled in two processes with the costs every
// design pays: the worker's backward writes its gradients, the shard applies them to its store
// (w -= lr * g) and the worker takes the store's values into its model. `socket`: over a local
// socket with a same-host stream's buffers, the kernel copying the gradients and the values in
// and out; `shared`: the gradients and the store lie in a mapping both processes share, read
// where they lie (each side woken by a byte on a socket pair); `cross`: the shard reads the
// gradients out of the worker's memory and writes the values into the worker's reply buffer
// (process_vm_readv / process_vm_writev: one kernel copy each way instead of two), each side
// woken by a byte; `shared_grads`: the gradients in the shared mapping, read where they lie, the
// values back over the socket; `shared_store`: the gradients over the socket, the store in the
// mapping, its values copied out into a reply buffer (as a link would hand them on) and from
// there into the model; `socket_bell`: as `socket`, but each side sends its bytes whole before
// a byte on a second socket pair tells the other to read them (the reader woken once per message
// instead of once per buffer the kernel queues as the writer goes). Rounds per second (0: the mode
// is not allowed here).
enum class exchange_mode { socket, shared, cross, shared_grads, shared_store, socket_bell };

double exchange_round(double seconds, exchange_mode mode) {
  const size_t n = payload / sizeof(float);
  const bool shared = mode == exchange_mode::shared;
  const bool grads_shared = shared || mode == exchange_mode::shared_grads;
  const bool store_shared = shared || mode == exchange_mode::shared_store;
  void* mem = ::mmap(nullptr, 2 * payload, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  int fds[2], bells[2];
  if (mem == MAP_FAILED || ::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0 || ::socketpair(AF_UNIX, SOCK_STREAM, 0, bells) != 0)
    return 0;
  for (int fd : fds)
    widen_local_buffers(fd);
  const bool belled = mode == exchange_mode::socket_bell;
  float* shared_grads = static_cast<float*>(mem);
  float* shared_store = shared_grads + n;
  // The worker's buffers, made before the fork: the shard knows their addresses (cross).
  std::vector<float> own_grads(grads_shared ? 0 : n), reply(shared ? 0 : n), model(n);
  // Which of the two travel over the socket (the rest lies in the mapping, or moved in place).
  const bool grads_travel = mode == exchange_mode::socket || mode == exchange_mode::shared_store || belled;
  const bool values_travel = mode == exchange_mode::socket || mode == exchange_mode::shared_grads || belled;
  const pid_t worker = ::getpid();
  // Hands the turn to the other side: the data itself where it travels over the socket, else a
  // byte saying it lies in the mapping or was moved in place (socket_bell: the data, and then a
  // byte saying it is all there, which the reader waits for before it reads).
  auto hand = [belled](int fd, int bell_fd, float* data, bool write, bool travels) {
    char bell = 0;
    auto ring = [&] { return write ? ::send(bell_fd, &bell, 1, MSG_NOSIGNAL) == 1 : ::recv(bell_fd, &bell, 1, 0) == 1; };
    auto move = [&] { return full_io(fd, reinterpret_cast<char*>(data), payload, write); };
    if (!travels)
      return ring();
    if (!belled)
      return move();
    return write ? move() && ring() : ring() && move();
  };
  // Moves the worker's bytes at `theirs` from (or, write, to) the shard's `ours`.
  auto cross = [worker](float* ours, float* theirs, bool write) {
    iovec local{ours, payload}, remote{theirs, payload};
    const ssize_t got = write ? ::process_vm_writev(worker, &local, 1, &remote, 1, 0)
                              : ::process_vm_readv(worker, &local, 1, &remote, 1, 0);
    return got == static_cast<ssize_t>(payload);
  };
  pid_t child = ::fork();
  if (child == 0) { // the shard
    ::close(fds[0]);
    ::close(bells[0]);
    std::vector<float> own_store(store_shared ? 0 : n), grads(grads_shared ? 0 : n);
    float* store = store_shared ? shared_store : own_store.data();
    const float* g = grads_shared ? shared_grads : grads.data();
    std::fill(store, store + n, 0.5f);
    while (hand(fds[1], bells[1], grads.data(), false, grads_travel)) {
      if (mode == exchange_mode::cross && !cross(grads.data(), own_grads.data(), false))
        break;
      for (size_t i = 0; i < n; ++i)
        store[i] -= 1e-6f * g[i];
      if (mode == exchange_mode::cross && !cross(store, reply.data(), true))
        break;
      if (!hand(fds[1], bells[1], store, true, values_travel))
        break;
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  ::close(bells[1]);
  float* grads = grads_shared ? shared_grads : own_grads.data();
  const float* values = shared ? shared_store : reply.data();
  float step = 0;
  double rate = rounds_per_second(seconds, [&] {
    step += 1;
    for (size_t i = 0; i < n; ++i) // (the backward pass's last write of the gradients)
      grads[i] = step * 1e-3f;
    if (!hand(fds[0], bells[0], grads, true, grads_travel) || !hand(fds[0], bells[0], reply.data(), false, values_travel))
      return false;
    if (mode == exchange_mode::shared_store) // (a link copying the values out of the mapping into the reply it hands on)
      std::memcpy(reply.data(), shared_store, payload);
    std::memcpy(model.data(), values, payload); // (the values into the model)
    return true;
  });
  ::close(fds[0]);
  ::close(bells[0]);
  ::waitpid(child, nullptr, 0);
  ::munmap(mem, 2 * payload);
  return rate;
}

// CPU seconds of this process and of its children waited for, user and system.
double cpu_seconds() {
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  rusage self{}, children{};
  ::getrusage(RUSAGE_SELF, &self);
  ::getrusage(RUSAGE_CHILDREN, &children);
  return seconds(self.ru_utime) + seconds(self.ru_stime) + seconds(children.ru_utime) + seconds(children.ru_stime);
}

// The shared-memory echoes beside the local socket's, one line each with the CPU time a round
// costs both processes together (BENCH_ONLY=shm).
void shared_memory_rows(double seconds) {
  auto measured = [seconds](auto echo) { // {rounds/s, CPU µs per round}
    const double cpu0 = cpu_seconds();
    const double rate = echo();
    return std::pair<double, double>{rate, (cpu_seconds() - cpu0) / (rate * seconds) * 1e6};
  };
  if (const char* m = std::getenv("BENCH_EXCHANGE")) { // (a probe: one way of the exchange model alone)
    const auto [r, c] = measured([&] { return exchange_round(seconds, static_cast<exchange_mode>(std::atoi(m))); });
    std::printf("mode %s: %.0f rounds/s (%.0f µs CPU)\n", m, r, c);
    return;
  }
  const auto [local, local_cpu] = measured([&] { return raw_echo(seconds, true); });
  std::printf("%zu KiB each way, rounds/s (CPU µs per round): raw local-socket echo %.0f (%.0f)\n", payload / 1024, local,
              local_cpu);
  for (size_t chunk : {payload, size_t{65536}, size_t{16384}})
    for (bool spin : {false, true}) {
      const auto [r, cpu] = measured([&] { return shared_memory_echo(seconds, chunk, spin); });
      std::printf("  shared mapping, %zu KiB chunks, reader %s: %.0f (%.2fx) (%.0f)\n", std::min(chunk, payload) / 1024,
                  spin ? "polling (a core busy)" : "woken by a socket byte", r, r / local, cpu);
    }
  const auto [r, cpu] = measured([&] { return shared_memory_echo(seconds, payload, false, false); });
  std::printf("  shared mapping, read in place by a reader woken by a socket byte: %.0f (%.2fx) (%.0f)\n", r, r / local,
              cpu);
  const auto [sock, sock_cpu] = measured([&] { return exchange_round(seconds, exchange_mode::socket); });
  const auto [map, map_cpu] = measured([&] { return exchange_round(seconds, exchange_mode::shared); });
  const auto [cma, cma_cpu] = measured([&] { return exchange_round(seconds, exchange_mode::cross); });
  const auto [half, half_cpu] = measured([&] { return exchange_round(seconds, exchange_mode::shared_grads); });
  const auto [store, store_cpu] = measured([&] { return exchange_round(seconds, exchange_mode::shared_store); });
  const auto [bell, bell_cpu] = measured([&] { return exchange_round(seconds, exchange_mode::socket_bell); });
  std::printf("a step's exchange (gradients written, applied to the store, values copied into the model), rounds/s (CPU "
              "µs per round):\n  over the local socket %.0f (%.0f); gradients and store in a shared mapping %.0f (%.0f): "
              "%.2fx the rounds, %.2fx the CPU\n",
              sock, sock_cpu, map, map_cpu, map / sock, map_cpu / sock_cpu);
  std::printf("  the shard reading the gradients from the worker's memory and writing the values into it "
              "(process_vm_readv / writev) %.0f (%.0f): %.2fx the rounds, %.2fx the CPU\n",
              cma, cma_cpu, cma / sock, cma_cpu / sock_cpu);
  std::printf("  the gradients alone in the shared mapping, read where they lie, the values over the socket %.0f (%.0f): "
              "%.2fx the rounds, %.2fx the CPU\n", half, half_cpu, half / sock, half_cpu / sock_cpu);
  std::printf("  the store alone in the shared mapping, its values copied out into a reply and then into the model, the "
              "gradients over the socket %.0f (%.0f): %.2fx the rounds, %.2fx the CPU\n",
              store, store_cpu, store / sock, store_cpu / sock_cpu);
  std::printf("  over the local socket, each side's bytes read once they are all there (a bell after them) %.0f (%.0f): "
              "%.2fx the rounds, %.2fx the CPU\n", bell, bell_cpu, bell / sock, bell_cpu / sock_cpu);
}

// Waits for the events of one stream on the bench's thread: the last transfer received, closing.
struct stream_waiter {
  std::mutex mtx;
  std::condition_variable cv;
  int64_t received = -1;
  bool closed = false;
  bool quiet = false; // (the child: its next push is always announced when the bench closes)

  tensor_stream_socket::callback callback(std::function<void(uint64_t)> on_received = nullptr) {
    return [this, on_received](const stream_event& e) {
      if (e.what == stream_event::kind::received && on_received)
        on_received(e.transfer);
      std::lock_guard<std::mutex> guard{mtx};
      if (e.what == stream_event::kind::received)
        received = static_cast<int64_t>(e.transfer);
      if (e.what == stream_event::kind::closed) {
        closed = true;
        if (e.error && !quiet)
          std::fprintf(stderr, "tensor stream: %s\n", describe(e.error).c_str());
      }
      cv.notify_all();
    };
  }

  // Returns false when the stream closed first.
  bool wait_received(int64_t id) {
    std::unique_lock<std::mutex> guard{mtx};
    cv.wait(guard, [&] { return received >= id || closed; });
    return received >= id;
  }
};

// The TLS session of a tensor stream on fd as `node` of the certificate folder (none without one).
std::unique_ptr<stream_tls> stream_session(const std::string& certs, const std::string& node, stream_tls::role r,
                                           int fd) {
  if (certs.empty())
    return nullptr;
  auto s = stream_tls::make({certs + "/" + node + ".pem", certs + "/" + node + ".key", certs + "/ca.pem", ""}, r, fd);
  if (!s) {
    std::fprintf(stderr, "tensor stream TLS: %s\n", describe(s.error()).c_str());
    std::exit(1);
  }
  return std::move(*s);
}

// Round trips per second of a 1 MiB push frame answered by a 1 MiB pull frame, through
// tensor-stream sockets in each process's middleman (the child answers transfer k with k and
// announces k + 1 before answering); over TLS when certs names a folder of scripts/make-certs.sh;
// with `local` over the same host's local socket.
double tensor_stream(double seconds, const std::string& certs, bool local = false) {
  auto listener = listen_for(local);
  const int lfd = listener.fd;
  int ready[2];
  if (::pipe(ready) != 0)
    return 0;
  pid_t child = ::fork();
  if (child == 0) {
    node_config cfg{"", ""};
    caf::actor_system sys{cfg};
    int fd = ::accept(lfd, nullptr, nullptr);
    if (local)
      widen_local_buffers(fd);
    std::vector<uint8_t> grads(payload), values(payload, 1);
    std::shared_ptr<tensor_stream_socket> stream;
    stream_waiter w;
    w.quiet = true;
    stream = tensor_stream_socket::start(sys, fd, "the bench's worker", 4 * payload, w.callback([&](uint64_t k) {
      stream->announce(k + 1, {{grads.data(), static_cast<uint32_t>(payload)}});
      stream->send(k, 0, values.data(), static_cast<uint32_t>(payload));
    }), unannounced_frames::refuse, stream_session(certs, "ps-0", stream_tls::role::server, fd));
    stream->announce(0, {{grads.data(), static_cast<uint32_t>(payload)}});
    sys.middleman().backend().dispatch([&] { (void)!::write(ready[1], "r", 1); }); // after the announcement
    std::unique_lock<std::mutex> guard{w.mtx};
    w.cv.wait(guard, [&] { return w.closed; });
    ::_exit(0);
  }
  ::close(lfd);
  node_config cfg{"", ""};
  caf::actor_system sys{cfg};
  int fd = connect_for(listener);
  char byte = 0;
  if (::read(ready[0], &byte, 1) != 1)
    return 0;
  std::vector<uint8_t> grads(payload, 2), values(payload);
  stream_waiter w;
  auto stream = tensor_stream_socket::start(sys, fd, "the bench's shard", 4 * payload, w.callback(),
                                            unannounced_frames::refuse,
                                            stream_session(certs, "worker-0", stream_tls::role::client, fd));
  int64_t k = 0;
  bool ok = true;
  double rate = rounds_per_second(seconds, [&] {
    stream->announce(static_cast<uint64_t>(k), {{values.data(), static_cast<uint32_t>(payload)}});
    stream->send(static_cast<uint64_t>(k), 0, grads.data(), static_cast<uint32_t>(payload));
    ok = w.wait_received(k++);
    return ok;
  });
  stream->close();
  {
    std::unique_lock<std::mutex> guard{w.mtx}; // (its callback touches w: no events after w is gone)
    w.cv.wait(guard, [&] { return w.closed; });
  }
  ::waitpid(child, nullptr, 0);
  if (!ok || values[0] != 1) {
    std::fprintf(stderr, "a tensor-stream round trip failed\n");
    std::exit(1);
  }
  return rate;
}

struct shard_rates {
  double sequential = 0; // push, wait for its ack, pull, wait for the values
  double pipelined = 0;  // push and pull sent together
  double exchange = 0;   // one push asking its values back (return_values), as an async worker's step does
};

// How a round moves its 1 MiB each way: shard_rates' three ways.
enum class round_shape { push_then_pull, pipelined, exchange };

// Round trips per second of push (1 MiB gradients) + pull (1 MiB values) to a ps node (its
// container) in a child, as a worker sends them: over BASP, or with stream through a ShardLink
// over the tensor stream (cluster.tensor-stream; with local, over the same-host local socket,
// else TCP); over TLS when certs names a folder of scripts/make-certs.sh.
shard_rates shard_protocol(double seconds, const std::string& certs, bool stream, bool in_place = true,
                           bool local = true) {
  const bool tls = !certs.empty();
  uint16_t port = 0;
  { // find a free port, then release it for the child's middleman
    int fd = listen_on_free_port(port);
    ::close(fd);
  }
  pid_t child = ::fork();
  if (child == 0) {
    node_config cfg{certs, "ps-0"};
    caf::actor_system sys{cfg};
    cluster_settings cluster;
    cluster.ps = {{"127.0.0.1", port}};
    cluster.tls = tls;
    cluster.stream_min_bytes = stream_min_bytes;
    cluster.local_streams = local;
    auto shard = make_resource_container(sys, {0, std::chrono::milliseconds{0}, std::chrono::milliseconds{30000}, false,
                                               nullptr, stream ? stream_port_at(sys, cluster, 0) : nullptr,
                                               stream_limits_of(cluster), in_place});
    if (!publish_at(sys, shard, {"127.0.0.1", port}, "shard", tls))
      ::_exit(1);
    caf::scoped_actor self{sys};
    self->monitor(shard);
    self->receive([](caf::down_msg&) {});
    ::_exit(0);
  }
  node_config cfg{certs, "worker-0"};
  caf::actor_system sys{cfg};
  auto remote = connect_to<parameter_shard_actor>(sys, {"127.0.0.1", port}, "bench", "shard", std::chrono::seconds(10), tls);
  if (!remote) {
    std::fprintf(stderr, "cannot reach the shard process: %s\n", caf::to_string(remote.error()).c_str());
    std::exit(1);
  }
  cluster_settings cluster;
  cluster.ps = {{"127.0.0.1", port}};
  cluster.tls = tls;
  cluster.stream_min_bytes = stream_min_bytes;
  cluster.request_timeout = std::chrono::seconds(30);
  cluster.local_streams = local;
  auto shard = stream ? open_shard_link(sys, cluster, *remote, 0, 0, "bench") : remote;
  if (!shard) {
    std::fprintf(stderr, "cannot open the tensor stream: %s\n", caf::to_string(shard.error()).c_str());
    std::exit(1);
  }
  const uint32_t n = payload / sizeof(float);
  caf::scoped_actor self{sys};
  auto timeout = std::chrono::seconds(30);
  shard_setup setup{0, {"round-robin", 1, {{"w", 1, static_cast<int32_t>(n)}}, {{0, 0, 1, 0}}}, {"sgd", 1e-6f}, 1,
                    {{0, 0, {std::vector<float>(n, 1.0f)}}}};
  self->request(*shard, timeout, init_atom_v, setup).receive([](const setup_reply&) {}, [](caf::error&) { std::exit(1); });
  // The rounds run in an actor on the scheduler, as a worker's requests do (a scoped actor's own
  // thread would add a thread hand-off to every exchange that a worker does not pay).
  auto driver = [shard = *shard, n](caf::event_based_actor* self) -> caf::behavior {
    struct run {
      round_shape shape;
      clock_type::time_point until;
      long rounds = 0;
      bool ok = true;
      caf::response_promise rp;
    };
    auto next = std::make_shared<std::function<void(std::shared_ptr<run>)>>();
    *next = [=](std::shared_ptr<run> r) {
      if (!r->ok || clock_type::now() >= r->until) {
        r->rp.deliver(r->ok ? r->rounds : -1L);
        return;
      }
      auto timeout = std::chrono::seconds(30);
      auto failed = [r](caf::error&) { r->ok = false; };
      push_request push{0, 0, {}}; // (one gradient written, as a worker's; an initializer list would copy it)
      push.grads.emplace_back();
      push.grads.back().data = tensor_buffer{float_vector(n, 0.5f)};
      auto pull_then = [=](auto after) {
        self->request(shard, timeout, pull_atom_v, pull_request{0, {{0, 0, n}}})
          .then([=](const pull_reply& p) {
                  r->ok = r->ok && p.slices.size() == 1 && p.slices[0].data.values.size() == n;
                  after();
                },
                [=](caf::error& e) { failed(e); after(); });
      };
      if (r->shape == round_shape::exchange) { // one exchange: the push's reply carries the values
        push.return_values = true;
        self->request(shard, timeout, push_atom_v, std::move(push))
          .then(
            [=](const push_reply& p) {
              r->ok = r->ok && p.values.size() == 1 && p.values[0].data.values.size() == n;
              ++r->rounds;
              (*next)(r);
            },
            [=](caf::error& e) { failed(e); (*next)(r); });
      } else if (r->shape == round_shape::pipelined) { // push and pull at once; the round ends when both answered
        auto left = std::make_shared<int>(2);
        auto done = [=] {
          if (--*left == 0) {
            ++r->rounds;
            (*next)(r);
          }
        };
        self->request(shard, timeout, push_atom_v, std::move(push))
          .then([=](const push_reply&) { done(); }, [=](caf::error& e) { failed(e); done(); });
        pull_then(done);
      } else {
        self->request(shard, timeout, push_atom_v, std::move(push))
          .then([=](const push_reply&) { pull_then([=] { ++r->rounds; (*next)(r); }); },
                [=](caf::error& e) { failed(e); (*next)(r); });
      }
    };
    return {[=](int32_t shape, double seconds) {
      auto r = std::make_shared<run>();
      r->shape = static_cast<round_shape>(shape);
      r->until = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(seconds));
      r->rp = self->make_response_promise();
      (*next)(r);
      return r->rp;
    }};
  };
  auto drive = sys.spawn(driver);
  bool ok = true;
  auto measure = [&](round_shape shape) {
    long rounds = -1;
    auto t0 = clock_type::now();
    self->request(drive, std::chrono::seconds(60), static_cast<int32_t>(shape), seconds)
      .receive([&](long k) { rounds = k; }, [&](caf::error&) {});
    const double dt = std::chrono::duration<double>(clock_type::now() - t0).count();
    ok = ok && rounds > 0;
    return static_cast<double>(rounds) / dt;
  };
  shard_rates rates;
  rates.sequential = measure(round_shape::push_then_pull);
  rates.pipelined = measure(round_shape::pipelined);
  rates.exchange = measure(round_shape::exchange);
  caf::anon_send_exit(drive, caf::exit_reason::user_shutdown);
  caf::anon_send(*remote, stop_atom_v);
  if (stream)
    caf::anon_send_exit(*shard, caf::exit_reason::user_shutdown);
  ::waitpid(child, nullptr, 0);
  close_stream_handlers(sys);
  if (!ok) {
    std::fprintf(stderr, "a push or pull failed\n");
    std::exit(1);
  }
  return rates;
}

// GB/s (of fp32 bytes) of each 16-bit conversion of a 1 MiB float tensor, and of memcpy.
void conversions(double seconds) {
  const size_t n = payload / sizeof(float);
  std::vector<float> xs(n), ys(n);
  std::vector<uint16_t> halves(n);
  std::mt19937 rng{1};
  std::normal_distribution<float> normal{0.0f, 0.05f}; // gradient- and weight-like values
  for (auto& x : xs)
    x = normal(rng);
  auto rate = [&](auto f) { // GB/s of floats
    return rounds_per_second(seconds, [&] { f(); return true; }) * static_cast<double>(payload) / 1e9;
  };
  const double copy = rate([&] { std::memcpy(ys.data(), xs.data(), payload); });
  std::printf("16-bit conversions of 1 MiB of floats, GB/s of floats (memcpy: %.1f)\n", copy);
  for (auto p : {wire_precision::bf16, wire_precision::fp16}) {
    const double enc = rate([&] { encode_halves(p, xs.data(), n, halves.data()); });
    const double dec = rate([&] { decode_halves(p, halves.data(), n, ys.data()); });
    const double rnd = rate([&] { round_to_precision(p, ys.data(), n); });
    std::printf("  %s: encode %.1f, decode %.1f, round %.1f (%.2f / %.2f / %.2f of memcpy)\n", to_string(p), enc,
                dec, rnd, enc / copy, dec / copy, rnd / copy);
  }
}

} // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  keep_freed_memory(); // (as actorps-node)
  double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  char dir_template[] = "/tmp/actorps-bench-certs-XXXXXX";
  std::string certs = ::mkdtemp(dir_template) ? dir_template : "";
  std::string make = std::string{ACTORPS_SOURCE_DIR} + "/scripts/make-certs.sh " + certs + " ps-0 worker-0 > /dev/null";
  if (certs.empty() || std::system(make.c_str()) != 0) {
    std::fprintf(stderr, "making certificates in %s failed\n", certs.c_str());
    return 1;
  }
  const char* only = std::getenv("BENCH_ONLY");
  if (only != nullptr && std::string{only} == "shm") {
    shared_memory_rows(seconds);
    std::system(("rm -rf " + certs).c_str());
    return 0;
  }
  auto linked = shard_protocol(seconds, "", true); // (same host: the local socket, cluster.local-streams)
  double tcp = raw_echo(seconds);
  auto tcp_linked = shard_protocol(seconds, "", true, true, false); // (cluster.local-streams = false)
  double local = raw_echo(seconds, true);
  auto via_container = shard_protocol(seconds, "", true, false); // (every request through the container's actors)
  // "a, b, c": r's three ways (shard_rates) over the same ways of `over`, or over one anchor's rounds.
  auto ratios_of = [](const shard_rates& r, const shard_rates& over) {
    char out[160];
    std::snprintf(out, sizeof out, "%.2f push then pull, %.2f pipelined, %.2f one exchange",
                  r.sequential / over.sequential, r.pipelined / over.pipelined, r.exchange / over.exchange);
    return std::string{out};
  };
  auto ratios = [&](const shard_rates& r, double anchor) { return ratios_of(r, {anchor, anchor, anchor}); };
  if (only != nullptr && std::string{only} == "stream") {
    std::system(("rm -rf " + certs).c_str());
    std::printf("raw TCP echo %.0f rounds/s, raw local-socket echo %.0f; shard over the stream, local socket: %.0f, "
                "%.0f, %.0f rounds/s (push then pull, pipelined, one exchange)\n", tcp, local, linked.sequential,
                linked.pipelined, linked.exchange);
    std::printf("  local socket / raw TCP: %s; / raw local-socket echo: %s\n", ratios(linked, tcp).c_str(),
                ratios(linked, local).c_str());
    std::printf("  over TCP / raw TCP: %s\n", ratios(tcp_linked, tcp).c_str());
    std::printf("  through the container's actors (local socket) / raw TCP: %s\n", ratios(via_container, tcp).c_str());
    return 0;
  }
  double stream = tensor_stream(seconds, "");
  double local_stream = tensor_stream(seconds, "", true);
  double tls_stream = tensor_stream(seconds, certs);
  auto shard = shard_protocol(seconds, "", false);
  auto tls = shard_protocol(seconds, certs, false);
  auto tls_linked = shard_protocol(seconds, certs, true);
  auto tls_tcp_linked = shard_protocol(seconds, certs, true, true, false);
  std::system(("rm -rf " + certs).c_str());
  auto mib = [](double rounds) { return rounds * payload / double(1 << 20); };
  auto row = [&](const char* what, double rounds) { std::printf("%-58s %10.0f %16.0f\n", what, rounds, mib(rounds)); };
  std::printf("%zu KiB each way between two processes on 127.0.0.1, %.0f s per measurement\n", payload / 1024, seconds);
  std::printf("%-58s %10s %16s\n", "", "rounds/s", "MiB/s each way");
  row("raw TCP echo", tcp);
  row("raw local-socket echo (Unix domain, widened buffers)", local);
  row("tensor-stream frames alone over TCP, push + pull", stream);
  row("tensor-stream frames alone over the local socket", local_stream);
  auto rows = [&](const std::string& what, const shard_rates& r) { // its three ways' rows
    row((what + ": push, then pull").c_str(), r.sequential);
    row((what + ": pipelined").c_str(), r.pipelined);
    row((what + ": one exchange").c_str(), r.exchange);
  };
  rows("shard over the stream, local socket", linked);
  rows("shard over the stream, TCP", tcp_linked);
  rows("local socket through the container's actors", via_container);
  rows("shard over BASP", shard);
  row("TLS 1.3: tensor-stream frames alone over TCP", tls_stream);
  rows("TLS cluster: shard over the stream, local socket (plain)", tls_linked);
  rows("TLS: shard over the stream, TCP", tls_tcp_linked);
  rows("TLS: shard over BASP", tls);
  std::printf("shard over the stream (local socket) / raw TCP: %s (one exchange as async workers run; goal >= 0.8); "
              "/ raw local-socket echo: %s\n", ratios(linked, tcp).c_str(), ratios(linked, local).c_str());
  std::printf("shard over the stream (TCP) / raw TCP: %s\n", ratios(tcp_linked, tcp).c_str());
  std::printf("the same through the container's actors / raw TCP: %s (served in place: %s of it)\n",
              ratios(via_container, tcp).c_str(), ratios_of(linked, via_container).c_str());
  std::printf("shard over BASP / raw TCP: %s\n", ratios(shard, tcp).c_str());
  std::printf("tensor-stream frames alone / raw TCP: %.2f; over the local socket / raw local-socket echo: %.2f\n",
              stream / tcp, local_stream / local);
  std::printf("TLS cluster / plain, shard over the stream: local socket %s (it never leaves the host: plain, "
              "security.local-streams-tls = false); TCP (TLS 1.3) %s (goal >= 0.85)\n",
              ratios_of(tls_linked, linked).c_str(), ratios_of(tls_tcp_linked, tcp_linked).c_str());
  std::printf("TLS / plain, shard over BASP: %s\n", ratios_of(tls, shard).c_str());
  std::printf("TLS / plain tensor-stream frames alone: %.2f\n", tls_stream / stream);
  std::printf("reference: ps-lite moves 1 MiB pushes at 1.8-2.0 GB/s on this machine kind (from the issue)\n");
  conversions(seconds / 3);
  return 0;
}
