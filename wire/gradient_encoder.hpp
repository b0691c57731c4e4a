// What a worker sends of its gradients (cluster.wire-precision, cluster.gradient-compression):
// each gradient slice plus what earlier steps did not send of it (error feedback) is rounded to
// the wire precision and, with top-k, cut to its k largest magnitudes; what was not sent is kept
// for the next step. So the sum of everything sent plus the kept residual equals the sum of the
// gradients. Plain logic, no CAF: the worker calls encode() on every slice it pushes.
#pragma once

#include "wire/precision.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace actorps {

enum class sparsifier : uint8_t { none, topk };

/// How a tensor is thinned before it travels: not at all, or to its k largest magnitudes.
/// "none", "topk".
const char* to_string(sparsifier c);

/// Parses a compression name; nullopt for anything else.
std::optional<sparsifier> parse_sparsifier(const std::string& name);

struct compression_settings {
  wire_precision precision = wire_precision::fp32;
  sparsifier compression = sparsifier::none;       ///< of the gradients a worker pushes
  double topk_ratio = 0.01; ///< top-k: the share of each slice's values sent, in (0, 1]
  sparsifier value_compression = sparsifier::none; ///< of the values a shard answers with
  /// > 0: momentum correction (DGC): a velocity u = momentum * u + gradient is what the residual
  /// accumulates, and u is cleared where a value was sent (momentum factor masking).
  float momentum = 0.0f;

  /// Whether gradients travel as computed (fp32, no compression: no residual kept).
  bool exact() const {
    return precision == wire_precision::fp32 && compression == sparsifier::none;
  }
};

/// Values a top-k slice of n floats sends: ceil(ratio * n), at least 1 (0 for an empty slice).
size_t topk_count(double ratio, size_t n);

/// Sets every entry of xs to 0 except the k of largest magnitude (ties: the lower index wins);
/// returns how many are left non-zero.
size_t keep_topk(float* xs, size_t n, size_t k);

class gradient_encoder {
public:
  explicit gradient_encoder(compression_settings settings) : settings_(settings) {
  }

  const compression_settings& settings() const {
    return settings_;
  }

  /// Replaces grad[0, n) (variable `variable` from `offset` on) by what is sent: grad (with
  /// momentum correction: the updated velocity) plus the residual, rounded and with top-k cut;
  /// the rest becomes the residual. Nothing for exact().
  void encode(uint32_t variable, uint32_t offset, float* grad, size_t n);

  /// The residual kept for variable[offset, offset + n) (zeros where nothing is kept).
  std::vector<float> residual(uint32_t variable, uint32_t offset, size_t n) const;

private:
  compression_settings settings_;
  std::unordered_map<uint32_t, std::vector<float>> residuals_;  // per variable, grown on demand
  std::unordered_map<uint32_t, std::vector<float>> velocities_; // momentum correction, likewise
};

} // namespace actorps
