// Shape checks shared by every backend.
#include "compute/backend.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

namespace actorps {

backend::~backend() = default;

caf::error check_gemm_shapes(bool trans_a, bool trans_b, matrix a, matrix b, matrix c) {
  int a_rows = trans_a ? a.cols : a.rows;
  int a_cols = trans_a ? a.rows : a.cols;
  int b_rows = trans_b ? b.cols : b.rows;
  int b_cols = trans_b ? b.rows : b.cols;
  if (a_cols != b_rows || a_rows != c.rows || b_cols != c.cols)
    return caf::make_error(errc::shape_mismatch,
                           cat("gemm: op(a) is ", a_rows, "x", a_cols, ", op(b) is ", b_rows, "x",
                               b_cols, ", c is ", c.rows, "x", c.cols));
  return caf::none;
}

} // namespace actorps
