// See exchange_model.hpp.
#include "bench/transfer/exchange_model.hpp"

#include "bench/transfer/bench_io.hpp"
#include "bench/transfer/echoes.hpp"
#include "node/local_stream_socket.hpp"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace actorps::bench {

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

} // namespace actorps::bench
