// Softmax cross-entropy (loss and gradient) and arg-max accuracy over rows of logits.
// Reductions are two-pass in a fixed order, so results are deterministic run to run.
#pragma once

#include <cuda_runtime.h>

namespace actorps::gpu {

/// grad = (softmax(logits) - onehot(labels)) / rows; *loss = mean row loss.
/// scratch: rows floats of device memory.
cudaError_t launch_softmax_xent(const float* logits, const float* labels, float* grad, float* loss,
                                float* scratch, int rows, int cols, cudaStream_t s);

/// *count = number of rows whose arg-max equals the label. scratch: rows floats.
cudaError_t launch_count_correct(const float* logits, const float* labels, float* count,
                                 float* scratch, int rows, int cols, cudaStream_t s);

} // namespace actorps::gpu
