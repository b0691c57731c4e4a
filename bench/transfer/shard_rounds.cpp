// See shard_rounds.hpp.
#include "bench/transfer/shard_rounds.hpp"

#include "actors/parameter_shard.hpp"
#include "actors/resource_container.hpp"
#include "bench/transfer/bench_io.hpp"
#include "common/shared_heap.hpp"
#include "messages/register.hpp"
#include "node/caf_defaults.hpp"
#include "node/connect.hpp"
#include "node/local_stream_socket.hpp"
#include "node/multiplexer_call.hpp"
#include "node/stream_endpoints.hpp"
#include "node/tensor_stream_socket.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/duration.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/scoped_actor.hpp>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace actorps::bench {

namespace {

// cluster.stream-min-bytes of both ends (BENCH_STREAM_MIN_BYTES=N; default: the option's).
const uint64_t stream_min_bytes = std::getenv("BENCH_STREAM_MIN_BYTES")
                                    ? std::strtoull(std::getenv("BENCH_STREAM_MIN_BYTES"), nullptr, 10)
                                    : cluster_settings{}.stream_min_bytes;

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

// How a round moves its 1 MiB each way: shard_rates' three ways.
enum class round_shape { push_then_pull, pipelined, exchange };

} // namespace

// Round trips per second of a 1 MiB push frame answered by a 1 MiB pull frame, through
// tensor-stream sockets in each process's middleman (the child answers transfer k with k and
// announces k + 1 before answering); over TLS when certs names a folder of scripts/make-certs.sh;
// with `local` over the same host's local socket.
double tensor_stream(double seconds, const std::string& certs, bool local) {
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

// Round trips per second of push (1 MiB gradients) + pull (1 MiB values) to a ps node (its
// container) in a child, as a worker sends them: over BASP, or with stream through a ShardLink
// over the tensor stream (cluster.tensor-stream; with local, over the same-host local socket,
// else TCP); over TLS when certs names a folder of scripts/make-certs.sh.
shard_rates shard_protocol(double seconds, const std::string& certs, bool stream, bool in_place,
                           bool local, bool shared, bool fresh) {
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
  cluster.local_shared_memory = shared;
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
  // A worker's deadline (detail::shard_deadline): none of CAF's on a request to its link, which
  // keeps the exchange's deadline itself; 30 s over BASP.
  const caf::duration deadline = stream ? caf::duration{caf::infinite} : caf::duration{std::chrono::seconds(30)};
  auto driver = [shard = *shard, n, deadline, fresh](caf::event_based_actor* self) -> caf::behavior {
    struct run {
      round_shape shape;
      clock_type::time_point until;
      long rounds = 0;
      bool ok = true;
      caf::response_promise rp;
      float_vector echo{}; // the last reply's values: the next push's gradients (unless fresh)
    };
    auto next = std::make_shared<std::function<void(std::shared_ptr<run>)>>();
    *next = [=](std::shared_ptr<run> r) {
      if (!r->ok || clock_type::now() >= r->until) {
        r->rp.deliver(r->ok ? r->rounds : -1L);
        return;
      }
      const auto timeout = deadline;
      auto failed = [r](caf::error&) { r->ok = false; };
      push_request push{0, 0, {}}; // (one gradient, as a worker's; an initializer list would copy it)
      push.grads.emplace_back();
      if (!fresh && r->echo.size() == n) {
        push.grads.back().data = tensor_buffer{std::move(r->echo)};
      } else { // (the first round)
        shared_heap::scope in_heap; // (as a worker builds its pushes: where a link shares them, in its heap)
        push.grads.back().data = tensor_buffer{float_vector(n, 0.5f)};
      }
      r->echo = float_vector{};
      auto pull_then = [=](auto after) {
        self->request(shard, timeout, pull_atom_v, pull_request{0, {{0, 0, n}}})
          .then([=](pull_reply& p) {
                  r->ok = r->ok && p.slices.size() == 1 && p.slices[0].data.values.size() == n;
                  if (r->ok)
                    r->echo = std::move(p.slices[0].data.values);
                  after();
                },
                [=](caf::error& e) { failed(e); after(); });
      };
      if (r->shape == round_shape::exchange) { // one exchange: the push's reply carries the values
        push.return_values = true;
        self->request(shard, timeout, push_atom_v, std::move(push))
          .then(
            [=](push_reply& p) {
              r->ok = r->ok && p.values.size() == 1 && p.values[0].data.values.size() == n;
              if (r->ok)
                r->echo = std::move(p.values[0].data.values);
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

} // namespace actorps::bench
