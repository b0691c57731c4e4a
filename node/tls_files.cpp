// Loading a node's certificate, key and CA file once with OpenSSL before CAF starts.
#include "node/tls_files.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstring>
#include <memory>
#include <string>

namespace actorps {

namespace {

// OpenSSL's reason for the last failure on this thread (its queue is cleared).
std::string openssl_reason() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0)
    return "no detail from OpenSSL";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

caf::error bad(const char* key, const std::string& path, const std::string& what) {
  return caf::make_error(errc::invalid_config, cat(key, " names \"", path, "\", ", what, " (", openssl_reason(), ")"));
}

int passphrase_cb(char* buf, int size, int, void* user) {
  auto* pass = static_cast<const std::string*>(user);
  int n = static_cast<int>(std::min<size_t>(pass->size(), static_cast<size_t>(size)));
  std::memcpy(buf, pass->data(), static_cast<size_t>(n));
  return n;
}

} // namespace

caf::error check_tls_files(const tls_files& files) {
  ERR_clear_error();
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx{SSL_CTX_new(TLS_method()), SSL_CTX_free};
  if (!ctx)
    return caf::make_error(errc::invalid_config, cat("OpenSSL cannot make a TLS context: ", openssl_reason()));
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), files.certificate.c_str()) != 1)
    return bad("openssl.certificate", files.certificate, "which is not a PEM certificate");
  SSL_CTX_set_default_passwd_cb(ctx.get(), passphrase_cb);
  SSL_CTX_set_default_passwd_cb_userdata(ctx.get(), const_cast<std::string*>(&files.passphrase));
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), files.key.c_str(), SSL_FILETYPE_PEM) != 1)
    return ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH
             ? bad("openssl.key", files.key, cat("which does not belong to the certificate ", files.certificate))
             : bad("openssl.key", files.key,
               files.passphrase.empty() ? "which is not a PEM private key (or needs openssl.passphrase)"
                                        : "which is not a PEM private key that openssl.passphrase opens");
  if (SSL_CTX_check_private_key(ctx.get()) != 1)
    return bad("openssl.key", files.key, cat("which does not belong to the certificate ", files.certificate));
  if (SSL_CTX_load_verify_locations(ctx.get(), files.cafile.c_str(), nullptr) != 1)
    return bad("openssl.cafile", files.cafile, "which holds no PEM certificate");
  return caf::none;
}

} // namespace actorps
