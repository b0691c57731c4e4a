// Tests of node/local_stream_socket: a listening name per call, a connection carrying bytes both
// ways, buffers wider than a socket's default, and a name nobody listens at refused by name.
#include "node/local_stream_socket.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <numeric>
#include <thread>
#include <vector>

using namespace actorps;

namespace {

// Moves n bytes through fd (non-blocking), waiting for it as needed.
bool full_io(int fd, uint8_t* p, size_t n, bool write) {
  size_t done = 0;
  while (done < n) {
    pollfd w{fd, static_cast<short>(write ? POLLOUT : POLLIN), 0};
    if (::poll(&w, 1, 10000) != 1)
      return false;
    const ssize_t k = write ? ::send(fd, p + done, n - done, MSG_NOSIGNAL) : ::recv(fd, p + done, n - done, 0);
    if (k <= 0)
      return false;
    done += static_cast<size_t>(k);
  }
  return true;
}

// The connection the listener accepts (waiting for it).
int accept_one(int lfd) {
  pollfd p{lfd, POLLIN, 0};
  BOOST_REQUIRE(::poll(&p, 1, 10000) == 1);
  int c = ::accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  BOOST_REQUIRE(c >= 0);
  return c;
}

} // namespace

BOOST_AUTO_TEST_SUITE(local_stream_socket)

BOOST_AUTO_TEST_CASE(a_connection_carries_a_megabyte_each_way_with_widened_buffers) {
  auto l = listen_local();
  BOOST_REQUIRE_MESSAGE(l, test::error_text(l));
  BOOST_TEST(l->name.rfind("actorps-stream-", 0) == 0u, l->name);
  auto other = listen_local();
  BOOST_REQUIRE(other);
  BOOST_TEST(other->name != l->name); // (random per ps node)
  auto c = connect_local(l->name);
  BOOST_REQUIRE_MESSAGE(c, test::error_text(c));
  int a = accept_one(l->fd);
  widen_local_buffers(a);
  BOOST_TEST(local_peer_of(a) == cat("this host (pid ", ::getpid(), ")"));
  int plain = ::socket(AF_UNIX, SOCK_STREAM, 0);
  BOOST_TEST(send_buffer_of(*c) > send_buffer_of(plain)); // (forced, or up to net.core.wmem_max)
  ::close(plain);
  std::vector<uint8_t> out(1 << 20), back(1 << 20);
  std::iota(out.begin(), out.end(), uint8_t{7});
  std::vector<uint8_t> mid(out.size());
  bool ok = true;
  // (one direction at a time: the buffers need not hold a whole megabyte)
  std::thread peer([&] { ok = full_io(a, mid.data(), mid.size(), false) && full_io(a, mid.data(), mid.size(), true); });
  BOOST_TEST(full_io(*c, out.data(), out.size(), true));
  BOOST_TEST(full_io(*c, back.data(), back.size(), false));
  peer.join();
  BOOST_TEST(ok);
  BOOST_TEST((back == out));
  for (int fd : {*c, a, l->fd, other->fd})
    ::close(fd);
}

BOOST_AUTO_TEST_CASE(a_name_nobody_listens_at_is_refused_by_name) {
  auto l = listen_local();
  BOOST_REQUIRE(l);
  const auto name = l->name;
  ::close(l->fd); // (gone: as a ps node on another host)
  auto c = connect_local(name);
  BOOST_REQUIRE(!c);
  BOOST_TEST((c.error() == errc::peer_unreachable));
  BOOST_TEST(describe(c.error()).find("@" + name) != std::string::npos, describe(c.error()));
  BOOST_TEST(!connect_local(""));
}

BOOST_AUTO_TEST_SUITE_END()
