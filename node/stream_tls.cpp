// One SSL_CTX per session (a stream per worker-shard pair: a handful per node).
#include "node/stream_tls.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <csignal>
#include <cstring>
#include <pthread.h>

namespace actorps {

namespace {

// Drains the thread's error queue into one line.
std::string ssl_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out += (out.empty() ? "" : "; ") + std::string{buf};
  }
  return out.empty() ? "no reason given" : out;
}

int passphrase_callback(char* buf, int size, int, void* user) {
  const auto* pass = static_cast<const std::string*>(user);
  const int n = static_cast<int>(std::min<size_t>(pass->size(), static_cast<size_t>(size - 1)));
  std::memcpy(buf, pass->data(), static_cast<size_t>(n));
  buf[n] = '\0';
  return n;
}


} // namespace

void stream_tls::ctx_deleter::operator()(void* ctx) const {
  SSL_CTX_free(static_cast<SSL_CTX*>(ctx));
}

void stream_tls::ssl_deleter::operator()(void* ssl) const {
  SSL_free(static_cast<SSL*>(ssl));
}

caf::expected<std::unique_ptr<stream_tls>> stream_tls::make(const tls_files& files, role r, int fd) {
  ERR_clear_error();
  std::unique_ptr<stream_tls> s{new stream_tls};
  s->passphrase_ = files.passphrase;
  SSL_CTX* ctx = SSL_CTX_new(TLS_method());
  s->ctx_.reset(ctx);
  auto refuse = [&](const std::string& what) {
    return caf::make_error(errc::invalid_config, cat("tensor stream TLS: ", what, ": ", ssl_errors()));
  };
  if (ctx == nullptr)
    return refuse("cannot make an OpenSSL context");
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256");
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // Read ahead into a 256 KiB buffer: one recv brings many records (without it each 16 KiB
  // record costs two recv calls, its header's and its body's).
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_default_read_buffer_len(ctx, 256 * 1024);
  if (!s->passphrase_.empty()) {
    SSL_CTX_set_default_passwd_cb(ctx, passphrase_callback);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, &s->passphrase_);
  }
  if (SSL_CTX_use_certificate_chain_file(ctx, files.certificate.c_str()) != 1)
    return refuse("cannot use the certificate " + files.certificate);
  if (SSL_CTX_use_PrivateKey_file(ctx, files.key.c_str(), SSL_FILETYPE_PEM) != 1
      || SSL_CTX_check_private_key(ctx) != 1)
    return refuse("cannot use the key " + files.key);
  if (SSL_CTX_load_verify_locations(ctx, files.cafile.c_str(), nullptr) != 1)
    return refuse("cannot use the CA file " + files.cafile);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  SSL* ssl = SSL_new(ctx);
  s->ssl_.reset(ssl);
  if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1)
    return refuse("cannot make a session");
  if (r == role::client)
    SSL_set_connect_state(ssl);
  else
    SSL_set_accept_state(ssl);
  return s;
}

stream_tls::~stream_tls() = default;

namespace {

// OpenSSL writes with write(2), which raises SIGPIPE where the peer has closed the connection (on a
// Unix-domain socket at the first write after its close): the signal is held back on this thread
// for the call and dropped, so the write fails with EPIPE and the stream closes by name. (One
// pending before the call could only be one this thread already held back: dropping it is as
// harmless.)
class sigpipe_held {
public:
  sigpipe_held() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~sigpipe_held() {
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) == 1) {
      const timespec now{0, 0};
      sigtimedwait(&pipe_, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  sigpipe_held(const sigpipe_held&) = delete;
  sigpipe_held& operator=(const sigpipe_held&) = delete;

private:
  sigset_t pipe_{};
  sigset_t old_{};
};

} // namespace

stream_tls::step stream_tls::result(int ret) {
  step out;
  if (ret > 0) {
    out.bytes = static_cast<size_t>(ret);
    return out;
  }
  switch (SSL_get_error(static_cast<SSL*>(ssl_.get()), ret)) {
    case SSL_ERROR_WANT_READ: out.what = step::state::want_read; break;
    case SSL_ERROR_WANT_WRITE: out.what = step::state::want_write; break;
    case SSL_ERROR_ZERO_RETURN: out.what = step::state::closed; break;
    case SSL_ERROR_SYSCALL:
      out.what = ERR_peek_error() == 0 && (ret == 0 || errno == 0) ? step::state::closed : step::state::failed;
      out.error = ret == 0 ? "the peer closed the connection" : ssl_errors() + " (" + std::strerror(errno) + ")";
      break;
    default: out.what = step::state::failed; out.error = ssl_errors(); break;
  }
  ERR_clear_error();
  return out;
}

stream_tls::step stream_tls::handshake() {
  ERR_clear_error();
  sigpipe_held held;
  const int ret = SSL_do_handshake(static_cast<SSL*>(ssl_.get()));
  if (ret == 1) {
    established_ = true;
    return {step::state::moved, 0, {}};
  }
  auto out = result(ret);
  if (out.what == step::state::closed) { // closed mid-handshake: a refusal (most likely ours or theirs)
    out.what = step::state::failed;
    if (out.error.empty())
      out.error = "the peer closed the connection during the handshake";
  }
  return out;
}

stream_tls::step stream_tls::read(void* into, size_t n) {
  ERR_clear_error();
  sigpipe_held held; // (a read may write: an alert, a key update's answer)
  return result(SSL_read(static_cast<SSL*>(ssl_.get()), into, static_cast<int>(std::min<size_t>(n, 1 << 30))));
}

stream_tls::step stream_tls::write(const void* from, size_t n) {
  ERR_clear_error();
  sigpipe_held held;
  return result(SSL_write(static_cast<SSL*>(ssl_.get()), from, static_cast<int>(std::min<size_t>(n, 1 << 30))));
}

} // namespace actorps
