// The test modules' TLS material, made once per test executable with scripts/make-certs.sh and
// the openssl CLI: a cluster CA with certificates for a shard and a worker, a second CA (an
// intruder's), and a self-signed certificate.
#pragma once

#include "tests/support/helpers.hpp"

#include <cstdlib>
#include <string>

namespace actorps::test {

struct certificates {
  temp_dir dir;
  std::string cluster = dir.file("cluster"), other = dir.file("other");
  bool made = false;

  certificates() {
    auto run = [](const std::string& command) { return std::system((command + " > /dev/null 2>&1").c_str()); };
    std::string make = std::string{ACTORPS_SOURCE_DIR} + "/scripts/make-certs.sh ";
    made = run(make + cluster + " ps-0 worker-0") == 0 && run(make + other + " intruder") == 0
           && run("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=worker-0 -keyout "
                  + dir.file("self.key") + " -out " + dir.file("self.pem"))
                == 0;
  }

  /// The files of a member of the cluster (ps-0, worker-0): certificate, key, CA.
  std::string certificate(const std::string& node) const { return cluster + "/" + node + ".pem"; }
  std::string key(const std::string& node) const { return cluster + "/" + node + ".key"; }
  std::string cafile() const { return cluster + "/ca.pem"; }
};

/// The one set of the test executable.
inline const certificates& test_certificates() {
  static certificates instance;
  return instance;
}

} // namespace actorps::test
