// Clears OpenSSL's per-thread error queue before every TLS read, write and handshake step that
// CAF's openssl module makes, as OpenSSL requires ("the current thread's error queue must be
// empty before the TLS/SSL I/O operation is attempted, or SSL_get_error() will not work
// reliably", SSL_get_error(3)).
//
// Why: CAF 0.17's caf::openssl::session leaves an error on the queue when a peer's connection
// breaks (SSL_ERROR_SYSCALL is handled without draining it). All connections of a node share
// the middleman's thread, so the next SSL_read on a *healthy* connection sees that stale error,
// SSL_get_error reports a failure, and CAF closes the healthy connection too: kill -9 one worker
// of a TLS cluster and the chief also loses the other workers or a shard
// (remote_link_unreachable). Measured before this file: 4 of 4 drills; after: 0 of 4.
//
// How: these definitions live in the executable (this file is an OBJECT library linked into
// every program that loads caf::openssl::manager), so the dynamic linker binds libcaf_openssl's
// calls to them; each clears the queue and calls OpenSSL's own function (dlsym RTLD_NEXT).
// Nothing else changes: same arguments, same results.
#include "node/next_definition.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace {

using read_fn = int (*)(SSL*, void*, int);
using write_fn = int (*)(SSL*, const void*, int);
using handshake_fn = int (*)(SSL*);

} // namespace

extern "C" {

int SSL_read(SSL* ssl, void* buf, int num) {
  static const auto fn = actorps::next_definition<read_fn>("SSL_read", "openssl_error_queue");
  ERR_clear_error();
  return fn(ssl, buf, num);
}

int SSL_write(SSL* ssl, const void* buf, int num) {
  static const auto fn = actorps::next_definition<write_fn>("SSL_write", "openssl_error_queue");
  ERR_clear_error();
  return fn(ssl, buf, num);
}

int SSL_connect(SSL* ssl) {
  static const auto fn = actorps::next_definition<handshake_fn>("SSL_connect", "openssl_error_queue");
  ERR_clear_error();
  return fn(ssl);
}

int SSL_accept(SSL* ssl) {
  static const auto fn = actorps::next_definition<handshake_fn>("SSL_accept", "openssl_error_queue");
  ERR_clear_error();
  return fn(ssl);
}

} // extern "C"
