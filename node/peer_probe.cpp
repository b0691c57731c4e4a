// A TLS ClientHello on a non-blocking socket, and a poll for the answer.
#include "node/peer_probe.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

namespace actorps {

namespace {

using clock = std::chrono::steady_clock;

// Waits until fd is ready for `events` or the deadline; returns whether it is.
bool wait_for(int fd, short events, clock::time_point until) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock::now()).count();
    if (left <= 0)
      return false;
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(left));
    if (n > 0)
      return true;
    if (n == 0 || errno != EINTR)
      return false;
  }
}

struct socket_closer {
  int fd;
  ~socket_closer() {
    if (fd >= 0)
      ::close(fd);
  }
};

// A TCP connection to ep within the deadline, or -1.
int connect_within(const endpoint& ep, clock::time_point until) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(ep.host.c_str(), std::to_string(ep.port).c_str(), &hints, &found) != 0)
    return -1;
  int result = -1;
  for (auto* a = found; a && result < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0)
      continue;
    int err = 0;
    socklen_t len = sizeof(err);
    if ((::connect(fd, a->ai_addr, a->ai_addrlen) == 0
         || (errno == EINPROGRESS && wait_for(fd, POLLOUT, until)
             && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)))
      result = fd;
    else
      ::close(fd);
  }
  ::freeaddrinfo(found);
  return result;
}

using context_ptr = std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)>;
using session_ptr = std::unique_ptr<SSL, decltype(&SSL_free)>;

context_ptr client_context() {
  return {SSL_CTX_new(TLS_client_method()), SSL_CTX_free};
}

// A client session of ctx on the connected socket fd, or null.
session_ptr session_on(SSL_CTX* ctx, int fd) {
  session_ptr ssl{ctx ? SSL_new(ctx) : nullptr, SSL_free};
  if (ssl && SSL_set_fd(ssl.get(), fd) != 1)
    ssl.reset();
  return ssl;
}

} // namespace

caf::error probe_tls_peer(const endpoint& ep, std::chrono::milliseconds deadline) {
  const auto until = clock::now() + deadline;
  socket_closer sock{connect_within(ep, until)};
  if (sock.fd < 0)
    return caf::make_error(errc::peer_unreachable, cat("no TCP connection to ", ep.str()));
  auto ctx = client_context();
  auto ssl = session_on(ctx.get(), sock.fd);
  if (!ssl) {
    ERR_clear_error();
    return caf::none; // cannot probe: let CAF try
  }
  // The ClientHello goes out on the first call; the answer makes the socket readable.
  int r = SSL_connect(ssl.get());
  int why = r == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl.get(), r);
  ERR_clear_error(); // (the probe's own failures must not reach CAF's next OpenSSL call)
  if (why == SSL_ERROR_WANT_WRITE && !wait_for(sock.fd, POLLOUT, until))
    why = SSL_ERROR_WANT_READ; // (then no answer either)
  if (why == SSL_ERROR_WANT_READ && !wait_for(sock.fd, POLLIN, until))
    return caf::make_error(errc::timeout, cat(ep.str(), " accepted the connection but sent no TLS handshake within ",
                                              deadline.count(), " ms"));
  return caf::none;
}

std::string explain_tls_refusal(const endpoint& ep, const tls_identity& id, std::chrono::milliseconds deadline) {
  const auto until = clock::now() + deadline;
  socket_closer sock{connect_within(ep, until)};
  if (sock.fd < 0)
    return {};
  auto ctx = client_context();
  if (!ctx)
    return {};
  SSL_CTX_set_default_passwd_cb_userdata(ctx.get(), const_cast<char*>(id.passphrase.c_str()));
  bool loaded = SSL_CTX_use_certificate_chain_file(ctx.get(), id.certificate.c_str()) == 1
                && SSL_CTX_use_PrivateKey_file(ctx.get(), id.key.c_str(), SSL_FILETYPE_PEM) == 1
                && SSL_CTX_load_verify_locations(ctx.get(), id.cafile.c_str(), nullptr) == 1;
  ERR_clear_error();
  if (!loaded)
    return {};
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  auto ssl = session_on(ctx.get(), sock.fd);
  if (!ssl)
    return {};
  // Drives the handshake, then one read: with TLS 1.3 the server judges our certificate after
  // our side of the handshake is done, and its refusal arrives as an alert on the next read.
  bool handshaken = false;
  for (;;) {
    char byte;
    int r = handshaken ? SSL_read(ssl.get(), &byte, 1) : SSL_connect(ssl.get());
    if (r > 0) {
      if (handshaken)
        return {}; // the peer talks: nothing refused
      handshaken = true;
      continue;
    }
    int why = SSL_get_error(ssl.get(), r);
    if ((why == SSL_ERROR_WANT_READ && wait_for(sock.fd, POLLIN, until))
        || (why == SSL_ERROR_WANT_WRITE && wait_for(sock.fd, POLLOUT, until)))
      continue;
    if (why == SSL_ERROR_WANT_READ || why == SSL_ERROR_WANT_WRITE) {
      ERR_clear_error();
      return {}; // no verdict before the deadline
    }
    auto verify = SSL_get_verify_result(ssl.get());
    unsigned long code = ERR_get_error();
    ERR_clear_error();
    if (verify != X509_V_OK)
      return cat("this node does not accept the peer's certificate (", X509_verify_cert_error_string(verify),
                 "; openssl.cafile is ", id.cafile, ")");
    if (code != 0) {
      char text[256];
      ERR_error_string_n(code, text, sizeof text);
      const char* reason = ERR_reason_error_string(code);
      return cat("the peer refused this node's certificate ", id.certificate, " (", reason ? reason : text, ")");
    }
    return {};
  }
}

} // namespace actorps
