// Tests of node/tensor_stream_socket over real loopback TCP in a running middleman: tensors of
// boundary sizes travel both ways straight into their announced destinations; a stranger's
// unannounced, oversized or random bytes and a payload cut short close the stream with the error
// naming them, the destination untouched; a peer that closes with nothing pending closes quietly;
// borrowed frames (a shard's values in its store) are written from where they lie as far as the
// socket takes them and copied for the rest, so the bytes may change once the call returned.
#include "node/tensor_stream_socket.hpp"

#include "node/multiplexer_call.hpp"

#include "common/errc.hpp"
#include "messages/stream_protocol.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/test_certificates.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/network/default_multiplexer.hpp>

#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

using namespace actorps;
using namespace std::chrono_literals;

namespace {

struct mpx_config : caf::actor_system_config {
  mpx_config() {
    load<caf::io::middleman>();
    set("logger.verbosity", caf::atom("quiet"));
  }
};

// A connected pair of loopback TCP sockets.
std::pair<int, int> tcp_pair() {
  int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::listen(lfd, 1);
  int a = ::socket(AF_INET, SOCK_STREAM, 0);
  ::connect(a, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  int b = ::accept(lfd, nullptr, nullptr);
  ::close(lfd);
  return {a, b};
}

// The events one stream reported, waited on from the test's thread.
struct event_log {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<stream_event> events;

  tensor_stream_socket::callback callback() {
    return [this](const stream_event& e) {
      std::lock_guard<std::mutex> guard{mtx};
      events.push_back(e);
      cv.notify_all();
    };
  }

  // The first event of kind k (and transfer t for received), waiting up to 10 s.
  std::optional<stream_event> wait(stream_event::kind k, uint64_t t = 0) {
    std::unique_lock<std::mutex> guard{mtx};
    std::optional<stream_event> found;
    cv.wait_for(guard, 10s, [&] {
      for (const auto& e : events)
        if (e.what == k && (k != stream_event::kind::received || e.transfer == t)) {
          found = e;
          return true;
        }
      return false;
    });
    return found;
  }
};

void write_all(int fd, const void* data, size_t n) {
  auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    BOOST_REQUIRE(k > 0);
    p += k;
    n -= static_cast<size_t>(k);
  }
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 gen{seed};
  std::vector<uint8_t> out(n);
  for (auto& b : out)
    b = static_cast<uint8_t>(gen());
  return out;
}

struct fixture {
  mpx_config cfg;
  caf::actor_system sys{cfg};
  ~fixture() {
    close_stream_handlers(sys); // (a stream still in the loop would keep the multiplexer running)
  }
};

// A stream on one end of a pair whose other end the test writes raw bytes to.
struct raw_peer {
  event_log log;
  std::shared_ptr<actorps::tensor_stream_socket> stream;
  int raw = -1;

  explicit raw_peer(caf::actor_system& sys, unannounced_frames unannounced = unannounced_frames::refuse) {
    auto [a, b] = tcp_pair();
    raw = a;
    stream = tensor_stream_socket::start(sys, b, "worker 9", 1 << 20, log.callback(), unannounced);
  }
  ~raw_peer() { // the stream's callback writes to log: no events after it is gone
    stream->close();
    log.wait(stream_event::kind::closed);
    ::close(raw);
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(tensor_stream_socket, fixture)

BOOST_AUTO_TEST_CASE(tensors_travel_both_ways_into_their_destinations) {
  auto [a_fd, b_fd] = tcp_pair();
  event_log a_log, b_log;
  auto a = actorps::tensor_stream_socket::start(sys, a_fd, "shard 0", 8 << 20, a_log.callback());
  auto b = actorps::tensor_stream_socket::start(sys, b_fd, "worker 0", 8 << 20, b_log.callback());
  // a pushes 4 tensors (empty, 1 byte, 3 floats, 4 MiB + 2 bytes) to b; b answers with one
  const size_t sizes[] = {0, 1, 12, (4u << 20) + 2};
  std::vector<std::vector<uint8_t>> sent, got;
  std::vector<stream_slot> slots;
  for (size_t i = 0; i < std::size(sizes); ++i) {
    sent.push_back(random_bytes(sizes[i], static_cast<uint32_t>(i + 1)));
    got.emplace_back(sizes[i], uint8_t{0xEE});
  }
  for (auto& g : got)
    slots.push_back({g.data(), static_cast<uint32_t>(g.size())});
  b->announce(11, slots);
  for (size_t i = 0; i < std::size(sizes); ++i)
    a->send(11, static_cast<uint32_t>(i), sent[i].data(), static_cast<uint32_t>(sent[i].size()));
  BOOST_REQUIRE(b_log.wait(stream_event::kind::received, 11));
  BOOST_TEST((got == sent));
  BOOST_TEST(a_log.wait(stream_event::kind::written).has_value());
  std::vector<uint8_t> back(1000, 0), reply = random_bytes(1000, 9);
  a->announce(12, {{back.data(), 1000}});
  b->send(12, 0, reply.data(), 1000);
  BOOST_REQUIRE(a_log.wait(stream_event::kind::received, 12));
  BOOST_TEST((back == reply));
  a->close();
  auto closed = a_log.wait(stream_event::kind::closed);
  BOOST_REQUIRE(closed);
  BOOST_TEST(!closed->error);
  auto peer_closed = b_log.wait(stream_event::kind::closed); // nothing pending there: quietly
  BOOST_REQUIRE(peer_closed);
  BOOST_TEST(!peer_closed->error, describe(peer_closed->error));
}

// 16 MiB of borrowed frames behind a message: more than the socket takes at once, so most are
// copied before the call returns. The sender overwrites its bytes right after each call, on the
// network's thread and from another one; the receiver gets the bytes as they were at the call.
BOOST_AUTO_TEST_CASE(borrowed_frames_arrive_as_they_were_at_the_call) {
  auto [a_fd, b_fd] = tcp_pair();
  event_log a_log, b_log;
  auto a = actorps::tensor_stream_socket::start(sys, a_fd, "shard 0", 40 << 20, a_log.callback());
  auto b = actorps::tensor_stream_socket::start(sys, b_fd, "worker 0", 40 << 20, b_log.callback());
  auto& mpx = dynamic_cast<caf::io::network::default_multiplexer&>(sys.middleman().backend());
  for (uint64_t transfer : {41, 42}) {
    const bool on_network_thread = transfer == 41;
    std::vector<std::vector<uint8_t>> source, expected, got;
    std::vector<stream_slot> slots;
    std::vector<stream_piece> pieces;
    for (uint32_t i = 0; i < 4; ++i) {
      source.push_back(random_bytes(4u << 20, static_cast<uint32_t>(transfer * 10 + i)));
      expected.push_back(source.back());
      got.emplace_back(4u << 20, uint8_t{0xEE});
      slots.push_back({got.back().data(), 4u << 20});
      pieces.push_back({source.back().data(), 4u << 20});
    }
    b->announce(transfer, slots);
    auto send_then_overwrite = [&] {
      a->send_call_borrowed(transfer, static_cast<uint32_t>(stream_call::push_reply), {'m', 's', 'g'}, pieces);
      for (auto& bytes : source)
        std::fill(bytes.begin(), bytes.end(), uint8_t{0x55});
    };
    if (on_network_thread)
      run_on_multiplexer(mpx, send_then_overwrite);
    else
      send_then_overwrite();
    BOOST_REQUIRE(b_log.wait(stream_event::kind::received, transfer));
    BOOST_TEST((got == expected), (on_network_thread ? "on the network's thread" : "from another thread"));
  }
  a->close();
  b->close();
  BOOST_TEST(a_log.wait(stream_event::kind::closed).has_value());
  BOOST_TEST(b_log.wait(stream_event::kind::closed).has_value());
}

// A transfer of more frames than one gathered sendmsg takes (max_write_pieces), with sizes from 0
// to 192 KiB (16 MiB in all: the socket takes it in many partial writes that end inside headers
// and tensors alike), arrives whole and in place, each frame reported written once, in order.
BOOST_AUTO_TEST_CASE(a_queue_of_many_frames_goes_out_in_gathered_writes_each_written_once) {
  auto [a_fd, b_fd] = tcp_pair();
  event_log a_log, b_log;
  auto a = actorps::tensor_stream_socket::start(sys, a_fd, "worker 0", 32 << 20, a_log.callback());
  auto b = actorps::tensor_stream_socket::start(sys, b_fd, "shard 0", 32 << 20, b_log.callback());
  std::mt19937 gen{5};
  std::vector<std::vector<uint8_t>> sent, got;
  std::vector<stream_slot> slots;
  std::vector<stream_piece> pieces;
  for (uint32_t i = 0; i < 170; ++i) {
    const size_t n = i % 17 == 0 ? 0 : gen() % (192u << 10);
    sent.push_back(random_bytes(n, i + 100));
    got.emplace_back(n, uint8_t{0xEE});
  }
  for (size_t i = 0; i < sent.size(); ++i) {
    slots.push_back({got[i].data(), static_cast<uint32_t>(got[i].size())});
    pieces.push_back({sent[i].data(), static_cast<uint32_t>(sent[i].size())});
  }
  b->announce(21, slots);
  a->send_all(21, pieces, nullptr);
  BOOST_REQUIRE(b_log.wait(stream_event::kind::received, 21));
  BOOST_TEST((got == sent));
  std::vector<uint32_t> written;
  {
    std::unique_lock<std::mutex> guard{a_log.mtx}; // (the last written event comes before the last frame arrives)
    for (const auto& e : a_log.events)
      if (e.what == stream_event::kind::written && e.transfer == 21)
        written.push_back(e.index);
  }
  std::vector<uint32_t> order(sent.size());
  for (uint32_t i = 0; i < order.size(); ++i)
    order[i] = i;
  BOOST_TEST((written == order));
  a->close(); // (their callbacks write to the logs: no events after they are gone)
  b->close();
  BOOST_TEST(a_log.wait(stream_event::kind::closed).has_value());
  BOOST_TEST(b_log.wait(stream_event::kind::closed).has_value());
}

BOOST_AUTO_TEST_CASE(unannounced_and_oversized_frames_close_the_stream_by_name) {
  for (bool oversized : {false, true}) {
    raw_peer p{sys};
    std::vector<uint8_t> dest(8, 0xEE);
    p.stream->announce(1, {{dest.data(), 8}});
    uint8_t header[stream_header_bytes];
    encode_stream_header({oversized ? 1u : 2u, 0, oversized ? 4096u : 8u}, header);
    write_all(p.raw, header, sizeof header);
    const std::vector<uint8_t> payload(oversized ? 4096 : 8, 0x11);
    write_all(p.raw, payload.data(), payload.size());
    auto closed = p.log.wait(stream_event::kind::closed);
    BOOST_REQUIRE(closed);
    const std::string want = oversized ? "tensor stream from worker 9: frame of 4096 bytes for tensor 0 of transfer 1, announced 8"
                                       : "tensor stream from worker 9: frame of unannounced transfer 2";
    BOOST_TEST(describe(closed->error).find(want) != std::string::npos, describe(closed->error));
    BOOST_TEST((dest == std::vector<uint8_t>(8, 0xEE)));
  }
}

BOOST_AUTO_TEST_CASE(a_payload_cut_short_is_named) {
  raw_peer p{sys};
  std::vector<uint8_t> dest(1000, 0xEE);
  p.stream->announce(3, {{dest.data(), 1000}});
  uint8_t header[stream_header_bytes];
  encode_stream_header({3, 0, 1000}, header);
  write_all(p.raw, header, sizeof header);
  const std::vector<uint8_t> half(500, 0x22);
  write_all(p.raw, half.data(), half.size());
  ::shutdown(p.raw, SHUT_WR);
  auto closed = p.log.wait(stream_event::kind::closed);
  BOOST_REQUIRE(closed);
  BOOST_TEST(describe(closed->error).find("connection closed, cutting short the payload of tensor 0 of transfer 3 "
                                          "(1000 bytes)")
               != std::string::npos,
             describe(closed->error));
  BOOST_TEST(!p.log.wait(stream_event::kind::received, 3).has_value());
}

// Holding: frames that come before their announcement wait in the socket until it comes.
BOOST_AUTO_TEST_CASE(frames_ahead_of_their_announcement_wait_for_it) {
  raw_peer p{sys, unannounced_frames::hold};
  std::vector<uint8_t> first(1000, 0xEE), second(10, 0xEE);
  const auto a = random_bytes(1000, 5), b = random_bytes(10, 6);
  for (auto [id, data] : {std::pair{uint64_t{6}, &a}, std::pair{uint64_t{7}, &b}}) {
    const auto f = make_stream_frame(id, 0, data->data(), static_cast<uint32_t>(data->size()));
    write_all(p.raw, f.header.data(), f.header.size());
    write_all(p.raw, f.data, f.bytes);
  }
  std::this_thread::sleep_for(100ms);
  {
    std::lock_guard<std::mutex> guard{p.log.mtx};
    BOOST_TEST(p.log.events.empty()); // both wait: nothing stored, nothing refused
  }
  p.stream->announce(6, {{first.data(), 1000}});
  BOOST_REQUIRE(p.log.wait(stream_event::kind::received, 6));
  BOOST_TEST((first == a));
  BOOST_TEST((second == std::vector<uint8_t>(10, 0xEE)));
  p.stream->announce(7, {{second.data(), 10}});
  BOOST_REQUIRE(p.log.wait(stream_event::kind::received, 7));
  BOOST_TEST((second == b));
}

// Issue 50, item 17: a frame held for a transfer never announced waited for ever. The owner's
// interval tick (expire_held) ends the stream when the same frame is still held at the next tick;
// a hold that its announcement resolves in between is left alone.
BOOST_AUTO_TEST_CASE(a_frame_whose_announcement_never_comes_ends_the_stream_at_the_second_tick) {
  raw_peer p{sys, unannounced_frames::hold};
  const auto a = random_bytes(100, 7);
  std::vector<uint8_t> dest(100, 0xEE);
  auto send_frame = [&](uint64_t id) {
    const auto f = make_stream_frame(id, 0, a.data(), 100);
    write_all(p.raw, f.header.data(), f.header.size());
    write_all(p.raw, f.data, f.bytes);
  };
  send_frame(4);
  std::this_thread::sleep_for(100ms);
  p.stream->expire_held(); // first look: held since the last, given an interval
  p.stream->announce(4, {{dest.data(), 100}});
  BOOST_REQUIRE(p.log.wait(stream_event::kind::received, 4));
  send_frame(5); // another hold: a new one, given its interval too
  std::this_thread::sleep_for(100ms);
  p.stream->expire_held();
  std::this_thread::sleep_for(100ms);
  {
    std::lock_guard<std::mutex> guard{p.log.mtx};
    for (auto& e : p.log.events)
      BOOST_TEST((e.what != stream_event::kind::closed));
  }
  p.stream->expire_held(); // the same frame, a whole interval later: the stream ends by name
  auto closed = p.log.wait(stream_event::kind::closed);
  BOOST_REQUIRE(closed);
  BOOST_TEST(describe(closed->error).find("a frame of transfer 5 waited a whole cluster.request-timeout for an "
                                          "announcement that never came") != std::string::npos,
             describe(closed->error));
  BOOST_TEST((dest == a)); // (the announced transfer's bytes, nothing of the refused one)
}

// The probe: random bytes from a stranger close the stream at the first header, storing nothing.
BOOST_AUTO_TEST_CASE(random_bytes_close_the_stream_and_store_nothing) {
  raw_peer p{sys};
  std::vector<uint8_t> dest(64, 0xEE);
  p.stream->announce(1, {{dest.data(), 64}});
  const auto garbage = random_bytes(4096, 2026);
  write_all(p.raw, garbage.data(), garbage.size());
  auto closed = p.log.wait(stream_event::kind::closed);
  BOOST_REQUIRE(closed);
  BOOST_TEST((closed->error == errc::protocol_error));
  BOOST_TEST(describe(closed->error).find("bad magic") != std::string::npos, describe(closed->error));
  BOOST_TEST((dest == std::vector<uint8_t>(64, 0xEE)));
}

// TLS (OpenSSL directly, TLS 1.3): members of the cluster's CA move tensors both ways; a peer
// whose certificate another CA signed, and a plain-TCP peer, are refused at the handshake by name.
namespace {

tls_files member_files(const std::string& node) {
  const auto& c = test::test_certificates();
  return {c.certificate(node), c.key(node), c.cafile(), ""};
}

std::unique_ptr<stream_tls> session(const tls_files& files, stream_tls::role r, int fd) {
  auto s = stream_tls::make(files, r, fd);
  BOOST_REQUIRE_MESSAGE(s, test::error_text(s));
  return std::move(*s);
}

} // namespace

BOOST_AUTO_TEST_CASE(members_move_tensors_over_tls) {
  BOOST_REQUIRE_MESSAGE(test::test_certificates().made, "making the test certificates failed");
  auto [a_fd, b_fd] = tcp_pair();
  event_log a_log, b_log;
  auto a = actorps::tensor_stream_socket::start(sys, a_fd, "shard 0", 8 << 20, a_log.callback(), unannounced_frames::refuse,
                                                session(member_files("worker-0"), stream_tls::role::client, a_fd));
  auto b = actorps::tensor_stream_socket::start(sys, b_fd, "worker 0", 8 << 20, b_log.callback(), unannounced_frames::refuse,
                                                session(member_files("ps-0"), stream_tls::role::server, b_fd));
  const auto big = random_bytes((2u << 20) + 3, 7), small = random_bytes(5, 8);
  std::vector<uint8_t> got_big(big.size()), got_small(small.size());
  b->announce(1, {{got_big.data(), static_cast<uint32_t>(big.size())}});
  a->send(1, 0, big.data(), static_cast<uint32_t>(big.size())); // (queued until the handshake completes)
  BOOST_REQUIRE(b_log.wait(stream_event::kind::received, 1));
  BOOST_TEST((got_big == big));
  a->announce(2, {{got_small.data(), 5}});
  b->send(2, 0, small.data(), 5);
  BOOST_REQUIRE(a_log.wait(stream_event::kind::received, 2));
  BOOST_TEST((got_small == small));
  a->close();
  BOOST_REQUIRE(a_log.wait(stream_event::kind::closed));
  BOOST_REQUIRE(b_log.wait(stream_event::kind::closed));
}

BOOST_AUTO_TEST_CASE(strangers_are_refused_at_the_tls_handshake) {
  const auto& c = test::test_certificates();
  BOOST_REQUIRE_MESSAGE(c.made, "making the test certificates failed");
  for (bool plain : {false, true}) {
    BOOST_TEST_CONTEXT((plain ? "a plain-TCP peer" : "a peer another CA signed")) {
      auto [a_fd, b_fd] = tcp_pair();
      event_log a_log, b_log;
      std::shared_ptr<actorps::tensor_stream_socket> a;
      if (!plain) // trusts the cluster's CA: only the shard's check of its certificate refuses it
        a = actorps::tensor_stream_socket::start(
            sys, a_fd, "shard 0", 1 << 20, a_log.callback(), unannounced_frames::refuse,
            session({c.other + "/intruder.pem", c.other + "/intruder.key", c.cafile(), ""}, stream_tls::role::client,
                    a_fd));
      std::vector<uint8_t> dest(64, 0xEE);
      auto b = actorps::tensor_stream_socket::start(sys, b_fd, "worker 5", 1 << 20, b_log.callback(),
                                                    unannounced_frames::refuse,
                                                    session(member_files("ps-0"), stream_tls::role::server, b_fd));
      b->announce(1, {{dest.data(), 64}});
      if (plain) { // a frame in the clear where the handshake is due
        const std::vector<uint8_t> payload(64, 0x11);
        const auto f = make_stream_frame(1, 0, payload.data(), 64);
        write_all(a_fd, f.header.data(), f.header.size());
        write_all(a_fd, f.data, f.bytes);
      }
      auto closed = b_log.wait(stream_event::kind::closed);
      BOOST_REQUIRE(closed);
      BOOST_TEST(describe(closed->error).find("tensor stream with worker 5: TLS handshake: ") != std::string::npos,
                 describe(closed->error));
      BOOST_TEST((dest == std::vector<uint8_t>(64, 0xEE)));
      if (a)
        BOOST_TEST(a_log.wait(stream_event::kind::closed).has_value());
      else
        ::close(a_fd);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
