// Local response normalisation on the host (the CPU backend's kernels), row by row over the
// channels: the window sums run in a fixed order, the same on every backend.
#pragma once

#include "compute/backend.hpp"

namespace actorps {

/// See backend::lrn.
void lrn_host(const float* x, int rows, int cols, const lrn_params& p, float* y);

/// See backend::lrn_backward: dx_i = dy_i s_i^-beta - 2 alpha beta x_i sum over |j - i| <= radius
/// of dy_j y_j / s_j, with s the forward's denominators before the power.
void lrn_backward_host(const float* x, const float* y, const float* dy, int rows, int cols, const lrn_params& p,
                       float* dx);

} // namespace actorps
