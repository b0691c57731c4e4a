// Initialisers with a portable generator (same values on every platform): Box-Muller and
// 53-bit uniforms on mt19937_64, not std::*_distribution, which differ between standard libraries.
#include "model/init.hpp"

#include "common/enum_names.hpp"
#include "common/log.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

namespace actorps {

const char* to_string(init_scheme s) {
  switch (s) {
    case init_scheme::notebook: return "notebook";
    case init_scheme::truncated_normal: return "truncated-normal";
    case init_scheme::random_normal: return "random-normal";
    case init_scheme::glorot_uniform: return "glorot-uniform";
    case init_scheme::he: return "he";
  }
  return "unknown";
}

std::optional<init_scheme> parse_init_scheme(const std::string& name) {
  return parse_by_name(name, all_init_schemes);
}

namespace {

double uniform01(std::mt19937_64& gen) {
  return static_cast<double>(gen() >> 11) * 0x1.0p-53; // [0, 1)
}

double standard_normal(std::mt19937_64& gen) {
  constexpr double two_pi = 6.283185307179586;
  double u1 = (static_cast<double>(gen() >> 11) + 1.0) * 0x1.0p-53; // (0, 1]
  double u2 = uniform01(gen);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
}

double truncated_normal(std::mt19937_64& gen) {
  for (;;) {
    double z = standard_normal(gen);
    if (std::fabs(z) <= 2.0)
      return z;
  }
}

enum class draw { truncated, normal, uniform };

// One weight variable's distribution: the draw and its scale (stddev, or the uniform's limit).
struct weight_rule {
  draw kind;
  double scale;
};

weight_rule rule_for(const init_options& init, const model_spec& spec, const variable_spec& w, bool logits,
                     double fan_in, double fan_out) {
  const bool conv = w.shape.size() == 4;
  auto glorot = weight_rule{draw::uniform, std::sqrt(6.0 / (fan_in + fan_out))};
  switch (init.scheme) {
    case init_scheme::notebook:
      if (logits || conv)
        return glorot;
      return {draw::truncated, 2.0 / std::sqrt(static_cast<double>(spec.input.size()) + w.cols)};
    case init_scheme::truncated_normal:
      return {draw::truncated, init.stddev > 0.0 ? init.stddev : 2.0 / std::sqrt(fan_in + fan_out)};
    case init_scheme::random_normal: return {draw::normal, init.stddev > 0.0 ? init.stddev : 1.0};
    case init_scheme::glorot_uniform: return glorot;
    case init_scheme::he: return {draw::truncated, std::sqrt(2.0 / fan_in)};
  }
  return glorot;
}

// A row's own stream (splitmix64): seeding a mt19937_64 per row would cost more than the row.
struct row_stream {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

} // namespace

void table_rows_initial(uint64_t seed, uint32_t first, size_t rows, int cols, float* out) {
  constexpr double two_pi = 6.283185307179586;
  const double scale = 1.0 / std::sqrt(static_cast<double>(cols));
  for (size_t r = 0; r < rows; ++r) {
    row_stream gen{seed ^ ((uint64_t{first} + r) * 0xD1B54A32D192ED03ull)};
    float* row = out + r * static_cast<size_t>(cols);
    for (int c = 0; c < cols;) { // Box-Muller pairs, each value cut at 2 stddev
      const double u1 = (static_cast<double>(gen.next() >> 11) + 1.0) * 0x1.0p-53;
      const double u2 = static_cast<double>(gen.next() >> 11) * 0x1.0p-53;
      const double radius = std::sqrt(-2.0 * std::log(u1));
      for (double z : {radius * std::cos(two_pi * u2), radius * std::sin(two_pi * u2)})
        if (c < cols && std::fabs(z) <= 2.0)
          row[c++] = static_cast<float>(scale * z);
    }
  }
}

void table_rows_initial(uint64_t seed, uint32_t first, uint32_t stride, size_t rows, int cols, float* out,
                        unsigned threads) {
  constexpr size_t rows_per_thread = 16384; // (below: a thread costs more than it saves)
  const unsigned cores = threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  const size_t count = std::min<size_t>(cores, std::max<size_t>(1, rows / rows_per_thread));
  auto make = [=](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r)
      table_rows_initial(seed, static_cast<uint32_t>(first + r * stride), 1, cols, out + r * static_cast<size_t>(cols));
  };
  std::vector<std::thread> pool;
  const size_t each = (rows + count - 1) / count;
  for (size_t t = 1; t < count; ++t)
    pool.emplace_back(make, std::min(rows, t * each), std::min(rows, (t + 1) * each));
  make(0, std::min(rows, each));
  for (auto& t : pool)
    t.join();
}

std::vector<std::vector<float>> initial_values(const model_spec& spec, const init_options& init,
                                               uint64_t seed, bool tables) {
  std::mt19937_64 gen{seed};
  std::vector<std::vector<float>> out;
  for (auto& w : spec.variables()) {
    if (!ends_with(w.name, "weights")) { // (".../weights", ".../depthwise_weights", ".../pointwise_weights") // biases at init.bias; batch norm's gamma and moving variance 1, the rest 0
      const bool one = ends_with(w.name, "/gamma") || ends_with(w.name, "/moving_variance");
      const bool bias = ends_with(w.name, "/bias");
      out.emplace_back(w.size(), bias ? static_cast<float>(init.bias) : one ? 1.0f : 0.0f);
      continue;
    }
    // TensorFlow's fans: the receptive field times the shape's last but one and last dimension;
    // a depthwise kernel ([k, k, C, 1]) counts its own window only (each output reads k x k
    // inputs, as PyTorch's grouped convolutions count: TensorFlow's k x k x C made its filters
    // sqrt(C) times smaller, which cost xception-mini 3 points after 1,000 steps)
    const double window = w.shape.size() == 4 ? double(w.shape[0]) * w.shape[1] : 1.0;
    const bool depthwise = w.shape.size() == 4 && w.shape[3] == 1 && w.name.find("depthwise") != std::string::npos;
    const double fan_in = window * (depthwise ? 1 : w.shape[w.shape.size() - 2]), fan_out = window * w.shape.back();
    // an embedding table: TF1's embedding_column default, a truncated normal of stddev 1/sqrt(D)
    // whatever the scheme (its fan-in, 2^B rows, says nothing of one example's input), by rows
    if (w.table) {
      out.emplace_back();
      if (tables) {
        out.back().resize(w.size());
        table_rows_initial(seed, 0, 1, static_cast<size_t>(w.rows), w.cols, out.back().data());
      }
      continue;
    }
    auto rule = rule_for(init, spec, w, w.name.rfind("logits/", 0) == 0, fan_in, fan_out);
    std::vector<float> weights(w.size());
    for (auto& v : weights) {
      double z = rule.kind == draw::truncated ? truncated_normal(gen)
                 : rule.kind == draw::normal  ? standard_normal(gen)
                                              : 2.0 * uniform01(gen) - 1.0;
      v = static_cast<float>(rule.scale * z);
    }
    out.push_back(std::move(weights));
  }
  return out;
}

} // namespace actorps
