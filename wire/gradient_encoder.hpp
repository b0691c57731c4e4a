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
  /// > 0: top-k warm-up (DGC): over the first topk_warmup_steps global steps the share sent falls
  /// geometrically from topk_warmup_start to topk_ratio (see topk_ratio_at).
  uint64_t topk_warmup_steps = 0;

  /// Whether gradients travel as computed (fp32, no compression: no residual kept).
  bool exact() const {
    return precision == wire_precision::fp32 && compression == sparsifier::none;
  }
};

/// Values a top-k slice of n floats sends: ceil(ratio * n), at least 1 (0 for an empty slice).
size_t topk_count(double ratio, size_t n);

/// DGC's first warm-up epoch sends a quarter of the values (Lin et al., 2018: 75% sparsity).
constexpr double topk_warmup_start = 0.25;

/// The share top-k sends at global step `step`: topk_ratio once the warm-up is over (or without
/// one); before, ratio^(t) · start^(1 - t) with t = step / topk_warmup_steps, so the share falls by
/// the same factor every step from max(start, ratio) at step 0 to the ratio at the warm-up's end.
double topk_ratio_at(const compression_settings& settings, uint64_t step);

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

  /// The global step whose gradients the next encode() calls carry (the top-k warm-up's clock).
  void begin_step(uint64_t step) {
    ratio_ = topk_ratio_at(settings_, step);
  }

  /// Replaces grad[0, n) (variable `variable` from `offset` on) by what is sent: grad (with
  /// momentum correction: the updated velocity) plus the residual, rounded and with top-k cut;
  /// the rest becomes the residual. Nothing for exact().
  void encode(uint32_t variable, uint32_t offset, float* grad, size_t n);

  /// Rounds a batch-norm moving statistic's batch values grad[0, n) to the wire's precision: no
  /// top-k, momentum or error feedback (they are values to move towards, not increments).
  void encode_statistic(float* grad, size_t n) const;

  /// The residual kept for variable[offset, offset + n) (zeros where nothing is kept).
  std::vector<float> residual(uint32_t variable, uint32_t offset, size_t n) const;

private:
  compression_settings settings_;
  double ratio_ = topk_ratio_at(settings_, 0); // the share top-k sends this step
  std::unordered_map<uint32_t, std::vector<float>> residuals_;  // per variable, grown on demand
  std::unordered_map<uint32_t, std::vector<float>> velocities_; // momentum correction, likewise
};

} // namespace actorps
