// Tests of node/stream_tls: a write to a peer that has closed its end fails by name instead of
// ending the process with SIGPIPE (OpenSSL writes with write(2); on a Unix-domain socket, as the
// same host's tensor streams use, the first write after the peer's close raises it).
#include "node/stream_tls.hpp"

#include "tests/support/test_certificates.hpp"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <sys/socket.h>
#include <unistd.h>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(stream_tls)

BOOST_AUTO_TEST_CASE(writing_to_a_closed_peer_fails_without_sigpipe) {
  BOOST_REQUIRE_MESSAGE(test::test_certificates().made, "making the test certificates failed");
  BOOST_REQUIRE(std::signal(SIGPIPE, SIG_DFL) != SIG_ERR); // (as a node runs: SIGPIPE ends the process)
  const auto& c = test::test_certificates();
  int sv[2];
  BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  ::close(sv[1]); // the peer is gone
  auto tls = actorps::stream_tls::make({c.certificate("worker-0"), c.key("worker-0"), c.cafile(), ""},
                                       actorps::stream_tls::role::client, sv[0]);
  BOOST_REQUIRE(tls);
  auto step = (*tls)->handshake(); // (the client's hello: a write)
  BOOST_TEST((step.what == actorps::stream_tls::step::state::failed), step.error);
  sigset_t pending;
  sigpending(&pending);
  BOOST_TEST(sigismember(&pending, SIGPIPE) == 0); // (nothing left to strike later)
  ::close(sv[0]);
}

BOOST_AUTO_TEST_SUITE_END()
