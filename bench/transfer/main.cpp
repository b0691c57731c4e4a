// actorps-bench-transfer: a 1 MiB push + pull round trip between two processes to a ps node, as
// workers send it: over the tensor stream (a ShardLink, cluster.tensor-stream; served from the
// shard's store in place, and the same through the container's and the shard's actors) and over BASP
// (raw-copy tensors inside the typed messages), each over plain TCP and over TLS with mutual
// authentication (certificates from scripts/make-certs.sh), the stream on the same-host local
// socket (cluster.local-streams; a push's gradients and values in the worker's shared heap, and as frames)
// and over TCP, versus raw TCP and local-socket echoes of the same
// bytes and the stream's frames alone (node/tensor_stream_socket), measured in one run on
// 127.0.0.1; then the 16-bit wire conversions (encode, decode,
// round) of the same 1 MiB of floats against a memcpy of it, on one thread.
//   actorps-bench-transfer [seconds-per-measurement=3]   (BENCH_BYTES=N: N bytes each way instead;
//   BENCH_ONLY=stream: the plain shard-over-the-stream rows and raw TCP alone, e.g. under perf;
//   BENCH_ONLY=tcp: the shard over the stream on TCP (also with each push's gradients written anew) and raw TCP alone;
//   BENCH_ONLY=tls: the stream's frames and the shard over the stream on TCP, TLS against plain;
//   BENCH_ONLY=shm: the local-socket echo beside echoes through a shared mapping (issue 48's item 3),
//   each with the CPU time a round costs both processes, and a step's exchange modelled six ways
//   (BENCH_EXCHANGE=N with BENCH_ONLY=shm: way N of exchange_mode alone, 0 the socket);
//   BENCH_STREAM_MIN_BYTES=N: cluster.stream-min-bytes, below which tensors travel inside the messages)
#include "bench/transfer/bench_io.hpp"
#include "bench/transfer/conversions.hpp"
#include "bench/transfer/echoes.hpp"
#include "bench/transfer/exchange_model.hpp"
#include "bench/transfer/shard_rounds.hpp"
#include "common/memory_policy.hpp"

#include <signal.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace actorps;
using namespace actorps::bench;

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
  if (only != nullptr && std::string{only} == "tcp") { // (e.g. under perf: the stream over TCP alone)
    auto tcp_linked = shard_protocol(seconds, "", true, true, false);
    double tcp = raw_echo(seconds);
    auto fresh = shard_protocol(seconds, "", true, true, false, true, true);
    std::system(("rm -rf " + certs).c_str());
    std::printf("raw TCP echo %.0f rounds/s; shard over the stream, TCP: %.0f, %.0f, %.0f rounds/s (push then pull, "
                "pipelined, one exchange); the same with each push's gradients written anew: %.0f, %.0f, %.0f\n", tcp,
                tcp_linked.sequential, tcp_linked.pipelined, tcp_linked.exchange, fresh.sequential, fresh.pipelined,
                fresh.exchange);
    return 0;
  }
  if (only != nullptr && std::string{only} == "tls") { // (e.g. under perf: TLS over TCP against plain TCP alone)
    double stream = tensor_stream(seconds, "");
    double tls_stream = tensor_stream(seconds, certs);
    auto tcp_linked = shard_protocol(seconds, "", true, true, false);
    auto tls_tcp_linked = shard_protocol(seconds, certs, true, true, false);
    std::system(("rm -rf " + certs).c_str());
    std::printf("tensor-stream frames alone over TCP: plain %.0f, TLS %.0f rounds/s (%.2f); shard over the stream, "
                "TCP: plain %.0f, %.0f, %.0f; TLS %.0f, %.0f, %.0f rounds/s (push then pull, pipelined, one exchange: "
                "TLS / plain %.2f, %.2f, %.2f)\n", stream, tls_stream, tls_stream / stream, tcp_linked.sequential,
                tcp_linked.pipelined, tcp_linked.exchange, tls_tcp_linked.sequential, tls_tcp_linked.pipelined,
                tls_tcp_linked.exchange, tls_tcp_linked.sequential / tcp_linked.sequential,
                tls_tcp_linked.pipelined / tcp_linked.pipelined, tls_tcp_linked.exchange / tcp_linked.exchange);
    return 0;
  }
  auto linked = shard_protocol(seconds, "", true); // (same host: the local socket, cluster.local-streams)
  double tcp = raw_echo(seconds);
  auto framed = shard_protocol(seconds, "", true, true, true, false); // (cluster.local-shared-memory = false)
  auto tcp_linked = shard_protocol(seconds, "", true, true, false); // (cluster.local-streams = false)
  double local = raw_echo(seconds, true);
  auto tcp_fresh = shard_protocol(seconds, "", true, true, false, true, true); // (each push's gradients written anew)
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
    std::printf("  local socket, tensors as frames / raw TCP: %s; through the shared heap / as frames: %s\n",
                ratios(framed, tcp).c_str(), ratios_of(linked, framed).c_str());
    std::printf("  over TCP / raw TCP: %s; each push's gradients written anew: %s\n", ratios(tcp_linked, tcp).c_str(),
                ratios(tcp_fresh, tcp).c_str());
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
  rows("the same, tensors as frames (no shared heap)", framed);
  rows("shard over the stream, TCP", tcp_linked);
  rows("the same, each push's gradients written anew", tcp_fresh);
  rows("local socket through the container's actors", via_container);
  rows("shard over BASP", shard);
  row("TLS 1.3: tensor-stream frames alone over TCP", tls_stream);
  rows("TLS cluster: shard over the stream, local socket (plain)", tls_linked);
  rows("TLS: shard over the stream, TCP", tls_tcp_linked);
  rows("TLS: shard over BASP", tls);
  std::printf("shard over the stream (local socket) / raw TCP: %s (one exchange as async workers run; goal >= 0.8); "
              "/ raw local-socket echo: %s\n", ratios(linked, tcp).c_str(), ratios(linked, local).c_str());
  std::printf("the same with the tensors as frames / raw TCP: %s; through the shared heap / as frames: %s\n",
              ratios(framed, tcp).c_str(), ratios_of(linked, framed).c_str());
  std::printf("shard over the stream (TCP) / raw TCP: %s; with each push's 1 MiB of gradients written anew (as a "
              "worker's download writes them; the echoes write none): %s\n", ratios(tcp_linked, tcp).c_str(),
              ratios(tcp_fresh, tcp).c_str());
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
