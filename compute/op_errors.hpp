// The sticky first-error record a backend keeps between sync() calls, and the shape check its
// ops share. Single-threaded, like its backend.
#pragma once

#include "compute/tensor.hpp"
#include "compute/window_geometry.hpp"

#include <caf/error.hpp>

#include <utility>

namespace actorps {

class op_errors {
public:
  /// Keeps err if it is the first error since the last take().
  void record(caf::error err) {
    if (err && !first_)
      first_ = std::move(err);
  }

  /// Returns whether a and b have the same shape; otherwise records shape_mismatch naming op.
  bool same_shape(const char* op, matrix a, matrix b);

  /// Returns whether op(a) * op(b) fits c; otherwise records shape_mismatch with the shapes.
  bool gemm_fits(bool trans_a, bool trans_b, matrix a, matrix b, matrix c);

  /// Returns whether g is usable; otherwise records shape_mismatch naming op and g's sizes.
  bool geometry_valid(const char* op, const window_geometry& g);

  /// Returns whether the backend that says `here` to direct_conv(g) runs op on g; otherwise
  /// records invalid_argument naming op (or geometry_valid's error).
  bool direct_conv_runs(const char* op, const window_geometry& g, bool here);

  /// Returns whether 0 <= rate < 1; otherwise records invalid_argument naming op.
  bool rate_valid(const char* op, float rate);

  /// Returns and clears the first recorded error.
  caf::error take() { return std::exchange(first_, caf::error{}); }

private:
  caf::error first_;
};

/// Returns the inner dimension k of op(a) * op(b): the columns of op(a).
inline int inner_dimension(bool trans_a, matrix a) {
  return trans_a ? a.rows : a.cols;
}

} // namespace actorps
