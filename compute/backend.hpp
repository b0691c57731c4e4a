// The compute backend interface every model computation goes through (CPU on OpenBLAS, CUDA on cuBLAS).
//
// Threading: a backend is used by one thread at a time (its owning worker). Pointers passed to the
// ops live in the backend's own memory (allocate()); host memory crosses only through upload() and
// download(). Ops may run asynchronously (CUDA queues them on one stream): they report failures
// (bad shapes, device errors) by recording the first one, which sync() returns and clears. No op
// throws, aborts or exits.
#pragma once

#include "compute/activation.hpp"
#include "compute/memory_meter.hpp"
#include "compute/optimizer_rules.hpp"
#include "compute/tensor.hpp"
#include "compute/window_geometry.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace actorps {

/// Local response normalisation's constants (TensorFlow's tf.nn.lrn defaults).
struct lrn_params {
  int radius = 5;
  float bias = 1.0f;
  float alpha = 1.0f;
  float beta = 0.5f;
  friend bool operator==(const lrn_params& a, const lrn_params& b) {
    return a.radius == b.radius && a.bias == b.bias && a.alpha == b.alpha && a.beta == b.beta;
  }
};

/// The ops of a backend, by name: soft placement runs those a backend has no kernel for on the
/// CPU (compute/soft_placement.hpp).
enum class backend_op {
  gemm, add_bias, sum_rows, axpy, scale, im2col, col2im, maxpool, maxpool_backward, dropout, multiply,
  activate, activate_backward, softmax_xent, count_correct, apply_update, channel_moments, batch_norm,
  batch_norm_backward, depthwise, depthwise_backward_input, depthwise_backward_weights, lrn, lrn_backward,
  embedding_bag, embedding_bag_backward
};

/// Every op, in declaration order.
constexpr backend_op all_backend_ops[] = {
  backend_op::gemm, backend_op::add_bias, backend_op::sum_rows, backend_op::axpy, backend_op::scale,
  backend_op::im2col, backend_op::col2im, backend_op::maxpool, backend_op::maxpool_backward, backend_op::dropout,
  backend_op::multiply, backend_op::activate, backend_op::activate_backward, backend_op::softmax_xent,
  backend_op::count_correct, backend_op::apply_update, backend_op::channel_moments, backend_op::batch_norm,
  backend_op::batch_norm_backward, backend_op::depthwise, backend_op::depthwise_backward_input,
  backend_op::depthwise_backward_weights, backend_op::lrn, backend_op::lrn_backward, backend_op::embedding_bag,
  backend_op::embedding_bag_backward};

/// An embedding bag's shapes: `rows` examples of `tokens` id slots each (compute/token_ids.hpp:
/// the ids first, then empty slots), a table of table_rows x dim (a power of two of rows; an id
/// picks row id mod table_rows), the rows of an example's ids combined by their mean or sum.
struct bag_geometry {
  int rows = 0;
  int tokens = 0;
  int table_rows = 0;
  int dim = 0;
  bool mean = true;
};

/// The op's name as written here, e.g. "maxpool_backward".
const char* to_string(backend_op op);

class backend {
public:
  virtual ~backend();

  /// Returns a one-line description, e.g. "cpu (OpenBLAS, 1 thread)".
  virtual std::string name() const = 0;

  /// Returns whether the backend computes on a GPU.
  virtual bool is_gpu() const = 0;

  /// Returns what the backend's buffers hold now and held at most (its scratch space included).
  virtual memory_use memory() const = 0;

  /// Returns whether the backend has a kernel for op (every backend here has every kernel; soft
  /// placement runs an op without one on the CPU).
  virtual bool has_kernel(backend_op op) const;

  // -- memory -----------------------------------------------------------------

  /// Allocates n zero-initialised floats in backend memory, or fails with out_of_memory.
  virtual caf::expected<buffer> allocate(size_t n) = 0;

  /// Copies n floats from host memory to backend memory at dst.
  virtual void upload(const float* host, size_t n, float* dst) = 0;

  /// Copies n floats from backend memory to host memory; returns after the copy completed
  /// (and all work queued before it), or with the first recorded error.
  virtual caf::error download(const float* src, size_t n, float* host) = 0;

  /// Copies n floats within backend memory.
  virtual void copy(const float* src, size_t n, float* dst) = 0;

  /// Waits for all queued work; returns and clears the first error recorded since the last sync.
  virtual caf::error sync() = 0;

  // -- linear algebra -----------------------------------------------------------

  /// c = alpha * op(a) * op(b) + beta * c, op(x) = x or its transpose. All row-major.
  virtual void gemm(bool trans_a, bool trans_b, float alpha, matrix a, matrix b, float beta,
                    matrix c) = 0;

  /// y[i][j] += bias[j] for every row i.
  virtual void add_bias(matrix y, const float* bias) = 0;

  /// out[j] = sum_i x[i][j] (the bias gradient).
  virtual void sum_rows(matrix x, float* out) = 0;

  /// y += alpha * x over n elements.
  virtual void axpy(size_t n, float alpha, const float* x, float* y) = 0;

  /// x *= alpha over n elements.
  virtual void scale(size_t n, float alpha, float* x) = 0;

  // -- convolution and pooling (NHWC) ---------------------------------------------

  /// Writes the im2col matrix of n examples x (g's input) into col: row (example, out_y, out_x),
  /// columns (k_y, k_x, channel); cells in the padding are 0. col holds n * positions() rows of
  /// window_size() floats.
  virtual void im2col(const window_geometry& g, int n, const float* x, float* col) = 0;

  /// The adjoint of im2col: dx (n inputs, overwritten) = the sum of every col entry into the
  /// input cell it was read from.
  virtual void col2im(const window_geometry& g, int n, const float* col, float* dx) = 0;

  /// Returns whether conv_forward and conv_backward compute g's convolution here without a column
  /// buffer, faster than im2col and gemm (the CPU with its AVX-512 products: compute/direct_conv);
  /// conv layers use im2col and gemm where not. The base says no.
  virtual bool direct_conv(const window_geometry& g) const;

  /// y (n * positions() rows x cout) = im2col(x) w, w: window_size() x cout. Backends that say
  /// no to direct_conv(g) record an invalid_argument error naming the op.
  virtual void conv_forward(const window_geometry& g, int n, const float* x, const float* w, int cout,
                            float* y) = 0;

  /// dw = im2col(x)^T dy + beta dw (beta 0: dw is not read); dx, unless null, = col2im(dy w^T)
  /// (overwritten). As conv_forward where direct_conv(g) says no.
  virtual void conv_backward(const window_geometry& g, int n, const float* x, const float* dy, const float* w,
                             int cout, float beta, float* dw, float* dx) = 0;

  /// Max pooling of n examples: y[example, out_y, out_x, c] = the window's largest input (cells
  /// in the padding never win); argmax records the winner's index in the window (k_y * k_w + k_x)
  /// as a float.
  virtual void maxpool(const window_geometry& g, int n, const float* x, float* y, float* argmax) = 0;

  /// dx (overwritten) = the sum of dy over the windows whose maximum each input cell was.
  virtual void maxpool_backward(const window_geometry& g, int n, const float* dy,
                                const float* argmax, float* dx) = 0;

  /// Depthwise convolution of n examples (one filter per channel): y[e, out_y, out_x, c] = the sum
  /// over g's window of x * w[k_y, k_x, c] (w: k_h x k_w x channels); padding cells count 0.
  virtual void depthwise(const window_geometry& g, int n, const float* x, const float* w, float* y) = 0;

  /// dx (overwritten) = the gradient of depthwise's input from dy.
  virtual void depthwise_backward_input(const window_geometry& g, int n, const float* dy, const float* w,
                                        float* dx) = 0;

  /// dw (overwritten) = the gradient of depthwise's filters: the sum over examples and positions.
  virtual void depthwise_backward_weights(const window_geometry& g, int n, const float* x, const float* dy,
                                          float* dw) = 0;

  // -- elementwise ---------------------------------------------------------------

  /// mask[i] = dropout_keep_scale(seed, i, rate) (compute/dropout_mask.hpp); y[i] = x[i] * mask[i]
  /// over n elements; y may alias x.
  virtual void dropout(size_t n, float rate, uint64_t seed, const float* x, float* y, float* mask) = 0;

  /// out[i] = a[i] * b[i] over n elements; out may alias a or b.
  virtual void multiply(size_t n, const float* a, const float* b, float* out) = 0;

  // -- activations and loss -----------------------------------------------------

  /// y = f(x) elementwise; y may alias x.
  virtual void activate(activation f, matrix x, matrix y) = 0;

  /// dx = dy * f'(x), computed from the forward output y = f(x); dx may alias dy.
  virtual void activate_backward(activation f, matrix y, matrix dy, matrix dx) = 0;

  /// Softmax cross-entropy over rows of logits with class indices labels[i] (stored as floats):
  /// *loss = mean over rows of -log softmax(logits)[label], grad = (softmax - onehot) / rows.
  /// loss points to one float in backend memory.
  virtual void softmax_xent(matrix logits, const float* labels, matrix grad, float* loss) = 0;

  /// *count = number of rows whose arg-max logit equals the label (one float in backend memory).
  virtual void count_correct(matrix logits, const float* labels, float* count) = 0;

  // -- batch normalisation (x: rows x channels; NHWC images have a row per example and position) --

  /// mean[c] and var[c]: the mean and the (biased) variance of column c of x.
  virtual void channel_moments(matrix x, float* mean, float* var) = 0;

  /// y = gamma * (x - mean) / sqrt(var + eps) + beta, column by column; y may alias x.
  virtual void batch_norm(matrix x, const float* mean, const float* var, const float* gamma, const float* beta,
                          float eps, matrix y) = 0;

  /// The gradients of y = batch_norm(x, moments of x, gamma, beta) from dy: dgamma[c] = sum of
  /// dy * xhat, dbeta[c] = sum of dy, and dx (through the batch's mean and variance too, as in
  /// training); dx may alias dy.
  virtual void batch_norm_backward(matrix x, matrix dy, const float* mean, const float* var, const float* gamma,
                                   float eps, float* dgamma, float* dbeta, matrix dx) = 0;

  // -- local response normalisation (TF's tf.nn.lrn over the channels of each row) ------------

  /// y[r][c] = x[r][c] / (p.bias + p.alpha * sum of x[r][c']^2 for |c' - c| <= p.radius)^p.beta.
  virtual void lrn(matrix x, const lrn_params& p, matrix y) = 0;

  /// dx (overwritten; may alias dy) from dy, the forward's x and y.
  virtual void lrn_backward(matrix x, matrix y, matrix dy, const lrn_params& p, matrix dx) = 0;

  // -- embedding bags (TF1's embedding_lookup_sparse, PyTorch's EmbeddingBag) -------------------

  /// out (rows x dim) = the mean (or sum) of table's rows picked by each example's ids (zero for
  /// an example without ids), in slot order.
  virtual void embedding_bag(const bag_geometry& g, const float* ids, const float* table, float* out) = 0;

  /// dtable: the rows the ids pick are set to zero, then each id's row gets its example's dout
  /// row (divided by the example's id count for the mean); no other row is touched.
  virtual void embedding_bag_backward(const bag_geometry& g, const float* ids, const float* dout, float* dtable) = 0;

  // -- optimizers ---------------------------------------------------------------

  /// Applies update number t of the optimizer p to n weights w with gradient g and its slots.
  virtual void apply_update(const optimizer_params& p, long t, size_t n, float* w, const float* g,
                            float* slot0, float* slot1) = 0;

  /// Applies update number t to `count` rows of `cols` weights: gradient row j (g + j * cols) to
  /// the weights at w + at[j] and the slots at the same offsets (an embedding table's sparse
  /// update). By default apply_update row by row; the CPU backend fetches rows ahead.
  virtual void apply_update_rows(const optimizer_params& p, long t, size_t cols, const size_t* at, size_t count,
                                 float* w, const float* g, float* slot0, float* slot1);
};

/// Allocates n floats on be into out (the error of allocate() otherwise); for models that
/// allocate many buffers in a row.
caf::error allocate_into(backend& be, size_t n, buffer& out);

} // namespace actorps
