// Start-up check of a node's TLS files with OpenSSL itself: the certificate and the CA file are
// PEM certificates, the key opens (with openssl.passphrase) and belongs to the certificate.
// CAF would otherwise accept them and fail later: an unhandled exception on a worker, an abort on
// a shard's first connection.
#pragma once

#include "config/cluster_options.hpp"

#include <caf/error.hpp>

namespace actorps {

/// REQUIRES: validate_tls(true, files) passed (every file is set and readable).
/// Errors (invalid_config) name the key, the file and what is wrong.
caf::error check_tls_files(const tls_files& files);

} // namespace actorps
