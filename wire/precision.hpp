// The precisions tensors may travel in (cluster.wire-precision): fp32 as computed, or 16-bit
// bfloat16 / IEEE half. Conversions round to nearest, ties to even; NaN stays NaN (quiet),
// infinities stay infinite, fp16 keeps denormals (and rounds values past 65504 to infinity).
// Plain functions: the tensor encoding (messages/tensor.hpp) and the gradient encoder use them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace actorps {

enum class wire_precision : uint8_t { fp32 = 0, bf16 = 1, fp16 = 2 };

/// "fp32", "bf16", "fp16".
const char* to_string(wire_precision p);

/// Parses a precision name; nullopt for anything else.
std::optional<wire_precision> parse_wire_precision(const std::string& name);

/// Bytes one value takes on the wire.
inline size_t bytes_per_value(wire_precision p) {
  return p == wire_precision::fp32 ? 4 : 2;
}

/// fp16's largest finite value: a gradient above it saturates there (gradient_encoder).
constexpr float fp16_max = 65504.0f;

/// The bits of a float, and the float of bits.
uint32_t bits_of(float x);
float float_of(uint32_t u);

uint16_t float_to_bf16(float x);
float bf16_to_float(uint16_t h);
uint16_t float_to_fp16(float x);
float fp16_to_float(uint16_t h);

/// Encodes n floats as 16-bit values of precision p (bf16 or fp16), in the host's byte order,
/// at out (any alignment).
void encode_halves(wire_precision p, const float* in, size_t n, void* out);

/// Decodes n 16-bit values of precision p (bf16 or fp16) at in (any alignment: a message's
/// buffer) into floats.
void decode_halves(wire_precision p, const void* in, size_t n, float* out);

/// Rounds n floats in place to the nearest value of precision p (nothing for fp32), so that
/// they travel exactly.
void round_to_precision(wire_precision p, float* xs, size_t n);

/// The same out of place, in one pass: out[i] = in[i] rounded (out may be in).
void round_copy(wire_precision p, const float* in, size_t n, float* out);

/// Error feedback in one pass: each xs[i] + residual[i] is rounded to precision p (fp16 saturating
/// at its largest finite value) into xs[i], and what rounding dropped stays in residual[i].
void round_with_residual(wire_precision p, float* xs, float* residual, size_t n);

} // namespace actorps
