// Truncated-normal initialisation with a portable generator (same values on every platform).
#include "model/init.hpp"

#include "common/enum_names.hpp"

#include <cmath>
#include <random>

namespace actorps {

const char* to_string(init_scheme s) {
  switch (s) {
    case init_scheme::truncated_normal: return "truncated-normal";
    case init_scheme::he: return "he";
  }
  return "unknown";
}

std::optional<init_scheme> parse_init_scheme(const std::string& name) {
  constexpr init_scheme all[] = {init_scheme::truncated_normal, init_scheme::he};
  return parse_by_name(name, all);
}

namespace {

// Box-Muller on mt19937_64 bits: std::normal_distribution differs between standard libraries.
double standard_normal(std::mt19937_64& gen) {
  constexpr double two_pi = 6.283185307179586;
  double u1 = (static_cast<double>(gen() >> 11) + 1.0) * 0x1.0p-53; // (0, 1]
  double u2 = static_cast<double>(gen() >> 11) * 0x1.0p-53;         // [0, 1)
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
}

double truncated_normal(std::mt19937_64& gen) {
  for (;;) {
    double z = standard_normal(gen);
    if (std::fabs(z) <= 2.0)
      return z;
  }
}

} // namespace

std::vector<std::vector<float>> initial_values(const mlp_spec& spec, init_scheme scheme,
                                               uint64_t seed) {
  std::mt19937_64 gen{seed};
  std::vector<std::vector<float>> out;
  for (auto& var : spec.variables()) {
    std::vector<float> values(var.size(), 0.0f);
    if (var.rows > 1 || var.name.find("/weights") != std::string::npos) {
      double fan_in = var.rows, fan_out = var.cols;
      double stddev = scheme == init_scheme::he ? std::sqrt(2.0 / fan_in)
                                                : 2.0 / std::sqrt(fan_in + fan_out);
      for (auto& v : values)
        v = static_cast<float>(stddev * truncated_normal(gen));
    }
    out.push_back(std::move(values));
  }
  return out;
}

} // namespace actorps
