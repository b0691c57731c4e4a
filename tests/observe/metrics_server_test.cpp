// Tests of observe/metrics_server over real loopback sockets: GET /metrics answers the body,
// other paths 404, a silent client does not block the next, a taken port is a named error.
#include "observe/metrics_server.hpp"

#include "common/errc.hpp"

#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

using namespace actorps;

namespace {

int connect_to(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  BOOST_REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  return fd;
}

std::string get(uint16_t port, const std::string& request) {
  int fd = connect_to(port);
  BOOST_REQUIRE(::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size()));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(metrics_server)

BOOST_AUTO_TEST_CASE(serves_metrics_and_refuses_other_paths) {
  int calls = 0;
  auto server = actorps::metrics_server::start("127.0.0.1", 0, [&] { return "actorps_global_step " + std::to_string(++calls) + "\n"; });
  BOOST_REQUIRE(server);
  const uint16_t port = (*server)->port();
  BOOST_TEST(port != 0);
  auto first = get(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  BOOST_TEST(first.find("HTTP/1.1 200 OK") == 0u, first);
  BOOST_TEST(first.find("text/plain; version=0.0.4") != std::string::npos, first);
  BOOST_TEST(first.find("\r\n\r\nactorps_global_step 1\n") != std::string::npos, first);
  auto second = get(port, "GET /metrics HTTP/1.1\r\n\r\n");
  BOOST_TEST(second.find("actorps_global_step 2") != std::string::npos, second);
  auto other = get(port, "GET / HTTP/1.1\r\n\r\n");
  BOOST_TEST(other.find("HTTP/1.1 404") == 0u, other);
  auto post = get(port, "POST /metrics HTTP/1.1\r\n\r\n");
  BOOST_TEST(post.find("HTTP/1.1 404") == 0u, post);
}

BOOST_AUTO_TEST_CASE(garbage_then_a_real_request) {
  auto server = actorps::metrics_server::start("127.0.0.1", 0, [] { return std::string{"x 1\n"}; });
  BOOST_REQUIRE(server);
  auto junk = get((*server)->port(), std::string("\x16\x03\x01\x02\x00\r\n\r\n", 9)); // (a TLS hello's first bytes)
  BOOST_TEST(junk.find("404") != std::string::npos, junk);
  BOOST_TEST(get((*server)->port(), "GET /metrics HTTP/1.0\r\n\r\n").find("x 1") != std::string::npos);
}

// Issue 50, item 12: a client sending one byte every 2 s kept the node from exiting after its
// run and made real scrapes time out. Scrapes are served while slow clients dribble, each client
// has a deadline for its whole request, and the stop never waits for one.
BOOST_AUTO_TEST_CASE(slow_clients_neither_block_scrapes_nor_the_stop) {
  auto server = actorps::metrics_server::start("127.0.0.1", 0, [] { return std::string{"x 1\n"}; });
  BOOST_REQUIRE(server);
  const uint16_t port = (*server)->port();
  std::atomic<bool> done{false};
  std::vector<int> slow;
  for (int i = 0; i < 3; ++i)
    slow.push_back(connect_to(port));
  std::thread dribble{[&] { // a byte a second each, never a whole request
    while (!done)
      for (int fd : slow) {
        ::send(fd, "G", 1, MSG_NOSIGNAL);
        std::this_thread::sleep_for(std::chrono::milliseconds(330));
      }
  }};
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (int i = 0; i < 3; ++i) { // each answered long before a slow client's deadline (5 s)
    int fd = connect_to(port);
    timeval limit{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    const std::string request = "GET /metrics HTTP/1.1\r\n\r\n";
    ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;)
      out.append(buf, static_cast<size_t>(n));
    ::close(fd);
    BOOST_TEST(out.find("x 1") != std::string::npos, "scrape " << i << " while slow clients dribble: '" << out << "'");
  }
  const auto t0 = std::chrono::steady_clock::now();
  server->reset(); // (the stop: slow clients still connected)
  const auto stop = std::chrono::steady_clock::now() - t0;
  BOOST_TEST((stop < std::chrono::seconds(2)), "the stop took " << std::chrono::duration<double>(stop).count() << " s");
  done = true;
  dribble.join();
  for (int fd : slow)
    ::close(fd);
}

BOOST_AUTO_TEST_CASE(a_client_past_its_deadline_is_closed) {
  auto server = actorps::metrics_server::start("127.0.0.1", 0, [] { return std::string{"x 1\n"}; });
  BOOST_REQUIRE(server);
  int fd = connect_to((*server)->port());
  timeval limit{9, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 7; ++i) { // one byte a second: alive, but never a whole request
    if (::send(fd, "G", 1, MSG_NOSIGNAL) != 1)
      break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  char buf[64];
  const auto n = ::recv(fd, buf, sizeof(buf), 0); // closed: 0 (or reset)
  const auto waited = std::chrono::steady_clock::now() - t0;
  ::close(fd);
  BOOST_TEST(n <= 0);
  BOOST_TEST((waited < std::chrono::seconds(9)), "closed after " << std::chrono::duration<double>(waited).count() << " s");
}

BOOST_AUTO_TEST_CASE(a_taken_port_or_a_bad_address_is_named) {
  auto first = actorps::metrics_server::start("127.0.0.1", 0, [] { return std::string{}; });
  BOOST_REQUIRE(first);
  auto again = actorps::metrics_server::start("127.0.0.1", (*first)->port(), [] { return std::string{}; });
  BOOST_REQUIRE(!again);
  BOOST_TEST((code_of(again.error()) == errc::invalid_config));
  BOOST_TEST(describe(again.error()).find("node.metrics-port") != std::string::npos, describe(again.error()));
  auto bad = actorps::metrics_server::start("not an address", 0, [] { return std::string{}; });
  BOOST_REQUIRE(!bad);
  BOOST_TEST(describe(bad.error()).find("not an address") != std::string::npos, describe(bad.error()));
}

BOOST_AUTO_TEST_SUITE_END()
