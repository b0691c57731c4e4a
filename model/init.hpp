// Seeded initial values of the MLP's variables (host memory).
#pragma once

#include "model/mlp_spec.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// Weight initialisation schemes; biases always start at zero.
enum class init_scheme {
  truncated_normal, ///< the notebooks' rule: stddev 2 / sqrt(fan_in + fan_out), cut at 2 stddev
  he,               ///< truncated normal with stddev sqrt(2 / fan_in)
};

/// Returns "truncated-normal" or "he".
const char* to_string(init_scheme s);

/// Parses "truncated-normal" or "he"; nullopt for anything else.
std::optional<init_scheme> parse_init_scheme(const std::string& name);

/// Returns the initial value of every variable of spec, in creation order; same seed, same values.
std::vector<std::vector<float>> initial_values(const mlp_spec& spec, init_scheme scheme,
                                               uint64_t seed);

} // namespace actorps
