// The backend base and the shape checks every backend shares.
#include "compute/backend.hpp"
#include "compute/op_errors.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

namespace actorps {

backend::~backend() = default;

bool backend::direct_conv(const window_geometry&) const {
  return false;
}

bool backend::has_kernel(backend_op) const {
  return true;
}

const char* to_string(backend_op op) {
  switch (op) {
    case backend_op::gemm: return "gemm";
    case backend_op::add_bias: return "add_bias";
    case backend_op::sum_rows: return "sum_rows";
    case backend_op::axpy: return "axpy";
    case backend_op::scale: return "scale";
    case backend_op::im2col: return "im2col";
    case backend_op::col2im: return "col2im";
    case backend_op::maxpool: return "maxpool";
    case backend_op::maxpool_backward: return "maxpool_backward";
    case backend_op::dropout: return "dropout";
    case backend_op::multiply: return "multiply";
    case backend_op::activate: return "activate";
    case backend_op::activate_backward: return "activate_backward";
    case backend_op::softmax_xent: return "softmax_xent";
    case backend_op::count_correct: return "count_correct";
    case backend_op::apply_update: return "apply_update";
    case backend_op::channel_moments: return "channel_moments";
    case backend_op::batch_norm: return "batch_norm";
    case backend_op::batch_norm_backward: return "batch_norm_backward";
    case backend_op::depthwise: return "depthwise";
    case backend_op::depthwise_backward_input: return "depthwise_backward_input";
    case backend_op::depthwise_backward_weights: return "depthwise_backward_weights";
    case backend_op::lrn: return "lrn";
    case backend_op::lrn_backward: return "lrn_backward";
    case backend_op::embedding_bag: return "embedding_bag";
    case backend_op::embedding_bag_backward: return "embedding_bag_backward";
  }
  return "unknown";
}

void backend::apply_update_rows(const optimizer_params& p, long t, size_t cols, const size_t* at, size_t count,
                                float* w, const float* g, float* slot0, float* slot1) {
  for (size_t j = 0; j < count; ++j)
    apply_update(p, t, cols, w + at[j], g + j * cols, slot0 ? slot0 + at[j] : nullptr, slot1 ? slot1 + at[j] : nullptr);
}

caf::error allocate_into(backend& be, size_t n, buffer& out) {
  auto buf = be.allocate(n);
  if (!buf)
    return std::move(buf.error());
  out = std::move(*buf);
  return caf::none;
}

bool op_errors::gemm_fits(bool trans_a, bool trans_b, matrix a, matrix b, matrix c) {
  int a_rows = trans_a ? a.cols : a.rows;
  int a_cols = trans_a ? a.rows : a.cols;
  int b_rows = trans_b ? b.cols : b.rows;
  int b_cols = trans_b ? b.rows : b.cols;
  if (a_cols == b_rows && a_rows == c.rows && b_cols == c.cols)
    return true;
  record(caf::make_error(errc::shape_mismatch, cat("gemm: op(a) is ", a_rows, "x", a_cols,
                                                   ", op(b) is ", b_rows, "x", b_cols, ", c is ",
                                                   c.rows, "x", c.cols)));
  return false;
}

bool op_errors::same_shape(const char* op, matrix a, matrix b) {
  if (a.rows == b.rows && a.cols == b.cols)
    return true;
  record(caf::make_error(errc::shape_mismatch,
                         cat(op, ": ", a.rows, "x", a.cols, " vs ", b.rows, "x", b.cols)));
  return false;
}

bool op_errors::geometry_valid(const char* op, const window_geometry& g) {
  if (g.valid())
    return true;
  record(caf::make_error(errc::shape_mismatch,
                         cat(op, ": invalid window geometry (input ", g.in_h, "x", g.in_w, "x",
                             g.channels, ", output ", g.out_h, "x", g.out_w, ", window ", g.k_h,
                             "x", g.k_w, ", stride ", g.stride, ")")));
  return false;
}

bool op_errors::direct_conv_runs(const char* op, const window_geometry& g, bool here) {
  if (!geometry_valid(op, g))
    return false;
  if (!here)
    record(caf::make_error(errc::invalid_argument,
                           cat(op, ": this backend has no direct convolution for this geometry (direct_conv() "
                                   "says no: use im2col and gemm)")));
  return here;
}

bool op_errors::rate_valid(const char* op, float rate) {
  if (rate >= 0.0f && rate < 1.0f)
    return true;
  record(caf::make_error(errc::invalid_argument, cat(op, ": rate ", rate, " is not in [0, 1)")));
  return false;
}

} // namespace actorps
