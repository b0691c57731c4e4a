// Seeded initial values of a model's variables (host memory), with TF1's initialisers.
#pragma once

#include "model/model_spec.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// Weight initialisation schemes. fan_in / fan_out of a conv kernel count k * k * channels.
enum class init_scheme {
  notebook,         ///< the exercise-10 notebook: hidden dense layers truncated normal with stddev
                    ///< 2 / sqrt(model inputs + units) (cut at 2 stddev), conv and logits
                    ///< Glorot uniform (tf.layers' default)
  truncated_normal, ///< truncated normal (cut at 2 stddev) with init.stddev, or with
                    ///< 2 / sqrt(fan_in + fan_out) per layer when stddev is 0
  random_normal,    ///< normal with init.stddev (tf.random_normal's default 1 when 0)
  glorot_uniform,   ///< uniform in +-sqrt(6 / (fan_in + fan_out))
  he,               ///< truncated normal with stddev sqrt(2 / fan_in)
};

constexpr init_scheme all_init_schemes[] = {init_scheme::notebook, init_scheme::truncated_normal,
                                            init_scheme::random_normal, init_scheme::glorot_uniform,
                                            init_scheme::he};

/// Returns "notebook", "truncated-normal", "random-normal", "glorot-uniform" or "he".
const char* to_string(init_scheme s);

/// Parses the names to_string() gives; nullopt for anything else.
std::optional<init_scheme> parse_init_scheme(const std::string& name);

/// How every variable starts.
struct init_options {
  init_scheme scheme = init_scheme::notebook;
  double stddev = 0.0; ///< truncated-normal, random-normal; 0: the scheme's default
  double bias = 0.0;   ///< every bias starts at this constant
  std::string from;    ///< model.init-from: start from this saved model's values instead ("": none)
};

/// Returns the initial value of every variable of spec, in creation order; same seed, same values.
/// Without `tables`, an embedding table's value is left empty (the ps nodes make their parts of
/// it: table_rows_initial).
std::vector<std::vector<float>> initial_values(const model_spec& spec, const init_options& init,
                                               uint64_t seed, bool tables = true);

/// Rows [first, first + rows) of an embedding table of `cols` columns as initial_values makes
/// them from `seed`: a truncated normal of stddev 1/sqrt(cols) (TF1's embedding_column), each
/// row from its own stream, so any part of the table comes out the same in any process.
void table_rows_initial(uint64_t seed, uint32_t first, size_t rows, int cols, float* out);

/// Rows first, first + stride, first + 2 stride, ... (`rows` of them) into out, one after the
/// other, as table_rows_initial makes each, on up to `threads` threads (0: one per core) where
/// there are enough of them to be worth it: the same values on any count.
void table_rows_initial(uint64_t seed, uint32_t first, uint32_t stride, size_t rows, int cols, float* out,
                        unsigned threads = 0);

} // namespace actorps
