// Tests of observe/metrics_server over real loopback sockets: GET /metrics answers the body,
// other paths 404, a silent client does not block the next, a taken port is a named error.
#include "observe/metrics_server.hpp"

#include "common/errc.hpp"

#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

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
