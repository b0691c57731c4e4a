// TLS 1.3 for a tensor stream with OpenSSL directly (CAF 0.17's openssl module secures BASP
// only): the node's certificate, key and CA file as for BASP, the peer verified both ways
// (refusing whom BASP refuses: no certificate, or one another CA signed), AES-GCM first
// (AES-NI). Non-blocking: each call does what the socket allows and says what it waits for.
// Every call leaves the thread's OpenSSL error queue empty (CAF's TLS shares the thread).
#pragma once

#include "config/cluster_options.hpp"

#include <caf/expected.hpp>

#include <cstddef>
#include <memory>
#include <string>

namespace actorps {

class stream_tls {
public:
  enum class role { client, server };

  /// What one call did: moved `bytes` (> 0), or waits for the socket, or ended.
  struct step {
    enum class state { moved, want_read, want_write, closed, failed } what = state::moved;
    size_t bytes = 0;
    std::string error; ///< failed: OpenSSL's reason
  };

  /// A session on the connected socket fd (not owned) as client or server; an error names the
  /// file OpenSSL could not use.
  static caf::expected<std::unique_ptr<stream_tls>> make(const tls_files& files, role r, int fd);

  ~stream_tls();
  stream_tls(const stream_tls&) = delete;
  stream_tls& operator=(const stream_tls&) = delete;

  /// Advances the handshake: moved when it is complete.
  step handshake();

  /// Whether the handshake completed.
  bool established() const { return established_; }

  /// Reads up to n bytes into `into` (decrypted in place).
  step read(void* into, size_t n);

  /// Writes up to n bytes from `from`.
  step write(const void* from, size_t n);

private:
  stream_tls() = default;
  step result(int ret);

  struct ctx_deleter {
    void operator()(void* ctx) const;
  };
  struct ssl_deleter {
    void operator()(void* ssl) const;
  };
  std::unique_ptr<void, ctx_deleter> ctx_;
  std::unique_ptr<void, ssl_deleter> ssl_;
  std::string passphrase_;
  bool established_ = false;
};

} // namespace actorps
