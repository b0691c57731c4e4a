// The CUDA backend: cuBLAS sgemm and the kernels of gpu/*.cu, queued on one stream per backend;
// host data crosses on a second (copy) stream through pinned staging (compute/staging_ring.hpp).
#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/memory_arena.hpp"
#include "compute/op_errors.hpp"
#include "compute/staging_ring.hpp"
#include "gpu/batch_norm.cuh"
#include "gpu/bias.cuh"
#include "gpu/cublas_library.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_select.hpp"
#include "gpu/elementwise.cuh"
#include "gpu/embedding.cuh"
#include "gpu/lrn.cuh"
#include "gpu/optimizer.cuh"
#include "gpu/softmax_xent.cuh"
#include "gpu/window_ops.cuh"

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace actorps {

caf::expected<int> cuda_device_count() {
  int count = 0;
  auto status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError(); // clear the sticky error so later calls are not poisoned
    return gpu::to_error(status, "cudaGetDeviceCount");
  }
  if (count == 0)
    return caf::make_error(errc::device_unavailable, "cudaGetDeviceCount found no CUDA device");
  return count;
}

namespace {

using gpu::to_error;

// Page-locked host memory the copies go through: the device reads and writes it at the bus's
// speed (pageable memory is copied through the driver's own staging, and each copy blocks the
// host), and a copy of more than a quarter of it goes in pieces, the next written while the one
// before it travels.
constexpr size_t pinned_staging_bytes = size_t{8} << 20;
// Copies in flight that each have an event of their own (more: the oldest is waited for).
constexpr size_t staging_events = 64;

class cuda_backend final : public backend {
public:
  // REQUIRES: init() succeeded before any other call.
  caf::error init(const device_options& opts) {
    device_ = opts.gpu_index;
    if (auto err = to_error(cudaSetDevice(device_), "cudaSetDevice"))
      return err;
    cudaDeviceProp prop;
    if (auto err = to_error(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties"))
      return err;
    device_name_ = prop.name;
    size_t free_bytes = 0, total_bytes = 0;
    if (auto err = to_error(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"))
      return err;
    policy_ = opts.gpu_memory;
    if (policy_.kind == gpu_memory_policy::mode::fraction) { // reserved now, handed out by the arena
      const auto want = static_cast<size_t>(policy_.fraction * static_cast<double>(total_bytes));
      void* p = nullptr;
      if (auto err = to_error(cudaMalloc(&p, want), "cudaMalloc"))
        return caf::make_error(errc::out_of_memory,
                               cat("compute.gpu-memory = ", to_string(policy_), ": cannot reserve ", want >> 20, " MiB of ",
                                   device_name_, " (", free_bytes >> 20, " of ", total_bytes >> 20, " MiB free; ",
                                   describe(err), ")"));
      block_ = static_cast<char*>(p);
      arena_.emplace(want);
      meter_.reserve(arena_->capacity());
    }
    if (auto err = to_error(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                            "cudaStreamCreate"))
      return err;
    if (auto err = init_staging(opts.pinned_copies))
      return err;
    auto blas = gpu::load_cublas(); // (the first backend of the process loads it)
    if (!blas)
      return std::move(blas.error());
    cublas_ = *blas;
    if (auto err = to_error(cublas_->create(&blas_), "cublasCreate"))
      return err;
    if (auto err = to_error(cublas_->set_stream(blas_, stream_), "cublasSetStream"))
      return err;
    // FP32 math, no TF32: results stay comparable with the CPU backend.
    return to_error(cublas_->set_math_mode(blas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  }

  ~cuda_backend() override {
    current();
    if (copy_stream_ != nullptr)
      cudaStreamSynchronize(copy_stream_);
    for (auto& [ticket, ev] : in_flight_)
      cudaEventDestroy(ev);
    for (auto ev : spare_events_)
      if (ev != nullptr)
        cudaEventDestroy(ev);
    for (auto ev : {compute_mark_, copy_mark_})
      if (ev != nullptr)
        cudaEventDestroy(ev);
    if (pinned_ != nullptr)
      cudaFreeHost(pinned_);
    if (copy_stream_ != nullptr)
      cudaStreamDestroy(copy_stream_);
    scratch_ = buffer{};
    if (block_ != nullptr)
      cudaFree(block_);
    if (blas_ != nullptr)
      cublas_->destroy(blas_);
    if (stream_ != nullptr)
      cudaStreamDestroy(stream_);
  }

  std::string name() const override {
    return cat("cuda:", device_, " (", device_name_, ", memory ",
               arena_ ? cat(arena_->capacity() >> 20, " MiB reserved") : std::string{"as needed"}, ")");
  }

  bool is_gpu() const override {
    return true;
  }

  memory_use memory() const override {
    return meter_.use();
  }

  caf::expected<buffer> allocate(size_t n) override {
    compute_op();
    const size_t bytes = std::max<size_t>(n, 1) * sizeof(float);
    float* data = nullptr;
    if (arena_) {
      auto offset = arena_->take(bytes);
      if (!offset)
        return caf::make_error(errc::out_of_memory,
                               cat(name(), ": allocating ", bytes, " bytes: compute.gpu-memory = ", to_string(policy_),
                                   " reserved ", arena_->capacity(), " bytes and ", arena_->in_use(),
                                   " are in use (largest free range ", arena_->largest_free(),
                                   "); raise the fraction or use grow"));
      data = reinterpret_cast<float*>(block_ + *offset);
    } else {
      void* p = nullptr;
      if (auto err = to_error(cudaMalloc(&p, bytes), "cudaMalloc"))
        return caf::make_error(errc::out_of_memory, cat(name(), ": allocating ", bytes, " bytes (", meter_.use().in_use,
                                                        " in use): ", describe(err)));
      data = static_cast<float*>(p);
    }
    if (auto err = to_error(cudaMemsetAsync(data, 0, bytes, stream_), "cudaMemsetAsync")) {
      release(data);
      return err;
    }
    meter_.took(bytes);
    return buffer{data, n, [this, bytes](float* ptr) {
                    release(ptr);
                    meter_.gave_back(bytes);
                  }};
  }

  void upload(const float* host, size_t n, float* dst) override {
    copy_op();
    if (!ring_) { // (no pinned staging: the driver copies from pageable memory, the host waiting)
      ACTORPS_CUDA_CHECK(cudaMemcpyAsync(dst, host, n * sizeof(float), cudaMemcpyHostToDevice, stream_));
      ACTORPS_CUDA_CHECK(cudaStreamSynchronize(stream_));
      return;
    }
    // The host buffer is free on return (its bytes are in the staging); the copy waits for the
    // work queued before it (which may still read dst), and the work queued after it waits for
    // the copy (copy_op, compute_op). The host goes on meanwhile.
    const auto* from = reinterpret_cast<const char*>(host);
    auto* to = reinterpret_cast<char*>(dst);
    in_pieces(n * sizeof(float), [&](size_t done, size_t piece) {
      const auto at = room_for(piece);
      std::memcpy(pinned_ + at.offset, from + done, piece);
      ACTORPS_CUDA_CHECK(cudaMemcpyAsync(to + done, pinned_ + at.offset, piece, cudaMemcpyHostToDevice, copy_stream_));
      sent(at.ticket);
    });
    copies_pending_ = true; // (the next op on the compute stream waits for them)
  }

  caf::error download(const float* src, size_t n, float* host) override {
    copy_op();
    if (!ring_) {
      ACTORPS_CUDA_CHECK(cudaMemcpyAsync(host, src, n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
      return sync();
    }
    // In pieces through the staging, after the work queued before it; each piece is copied out
    // once its ticket is done, while the later pieces travel.
    struct arriving {
      uint64_t ticket;
      size_t offset;
      char* to;
      size_t bytes;
    };
    std::deque<arriving> pieces;
    auto land = [&](uint64_t upto) { // waits for ticket upto; copies out every piece up to it
      wait_for(upto);
      while (!pieces.empty() && pieces.front().ticket <= upto) {
        std::memcpy(pieces.front().to, pinned_ + pieces.front().offset, pieces.front().bytes);
        pieces.pop_front();
      }
    };
    const auto* from = reinterpret_cast<const char*>(src);
    auto* to = reinterpret_cast<char*>(host);
    in_pieces(n * sizeof(float), [&](size_t done, size_t piece) {
      const auto at = room_for(piece, [&](uint64_t ticket) { land(ticket); });
      ACTORPS_CUDA_CHECK(cudaMemcpyAsync(pinned_ + at.offset, from + done, piece, cudaMemcpyDeviceToHost, copy_stream_));
      sent(at.ticket);
      pieces.push_back({at.ticket, at.offset, to + done, piece});
    });
    if (!pieces.empty())
      land(pieces.back().ticket);
    return errors_.take();
  }

  void copy(const float* src, size_t n, float* dst) override {
    compute_op();
    ACTORPS_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
  }

  caf::error sync() override {
    current();
    ACTORPS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (copy_stream_ != nullptr) { // (every copy is done: nothing is left to wait for)
      ACTORPS_CUDA_CHECK(cudaStreamSynchronize(copy_stream_));
      retire(ring_ ? ring_->last_ticket() : 0);
      copies_pending_ = compute_queued_ = false;
    }
    return errors_.take();
  }

  void gemm(bool trans_a, bool trans_b, float alpha, matrix a, matrix b, float beta,
            matrix c) override {
    compute_op();
    if (!errors_.gemm_fits(trans_a, trans_b, a, b, c))
      return;
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
    const int k = inner_dimension(trans_a, a);
    errors_.record(to_error(cublas_->sgemm(blas_, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                           trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, c.cols, c.rows, k, &alpha,
                                           b.data, b.cols, a.data, a.cols, &beta, c.data, c.cols), "cublasSgemm"));
  }

  void add_bias(matrix y, const float* bias) override {
    compute_op();
    ACTORPS_CUDA_CHECK(gpu::launch_add_bias(y.data, bias, y.rows, y.cols, stream_));
  }

  void sum_rows(matrix x, float* out) override {
    compute_op();
    ACTORPS_CUDA_CHECK(gpu::launch_sum_rows(x.data, out, x.rows, x.cols, stream_));
  }

  void axpy(size_t n, float alpha, const float* x, float* y) override {
    compute_op();
    ACTORPS_CUDA_CHECK(gpu::launch_axpy(n, alpha, x, y, stream_));
  }

  void scale(size_t n, float alpha, float* x) override {
    compute_op();
    ACTORPS_CUDA_CHECK(gpu::launch_scale(n, alpha, x, stream_));
  }

  void im2col(const window_geometry& g, int n, const float* x, float* col) override {
    compute_op();
    if (errors_.geometry_valid("im2col", g))
      ACTORPS_CUDA_CHECK(gpu::launch_im2col(g, n, x, col, stream_));
  }

  void col2im(const window_geometry& g, int n, const float* col, float* dx) override {
    compute_op();
    if (errors_.geometry_valid("col2im", g))
      ACTORPS_CUDA_CHECK(gpu::launch_col2im(g, n, col, dx, stream_));
  }

  // No direct convolution here (direct_conv() is false): conv layers use im2col and cuBLAS.
  void conv_forward(const window_geometry& g, int, const float*, const float*, int, float*) override {
    errors_.direct_conv_runs("conv_forward", g, false);
  }

  void conv_backward(const window_geometry& g, int, const float*, const float*, const float*, int, float, float*,
                     float*) override {
    errors_.direct_conv_runs("conv_backward", g, false);
  }

  void maxpool(const window_geometry& g, int n, const float* x, float* y, float* argmax) override {
    compute_op();
    if (errors_.geometry_valid("maxpool", g))
      ACTORPS_CUDA_CHECK(gpu::launch_maxpool(g, n, x, y, argmax, stream_));
  }

  void maxpool_backward(const window_geometry& g, int n, const float* dy, const float* argmax,
                        float* dx) override {
    compute_op();
    if (errors_.geometry_valid("maxpool_backward", g))
      ACTORPS_CUDA_CHECK(gpu::launch_maxpool_backward(g, n, dy, argmax, dx, stream_));
  }

  void dropout(size_t n, float rate, uint64_t seed, const float* x, float* y, float* mask) override {
    compute_op();
    if (errors_.rate_valid("dropout", rate))
      ACTORPS_CUDA_CHECK(gpu::launch_dropout(n, rate, seed, x, y, mask, stream_));
  }

  void multiply(size_t n, const float* a, const float* b, float* out) override {
    compute_op();
    ACTORPS_CUDA_CHECK(gpu::launch_multiply(n, a, b, out, stream_));
  }

  void activate(activation f, matrix x, matrix y) override {
    compute_op();
    if (errors_.same_shape("activate", x, y))
      ACTORPS_CUDA_CHECK(gpu::launch_activate(f, x.data, y.data, x.size(), stream_));
  }

  void activate_backward(activation f, matrix y, matrix dy, matrix dx) override {
    compute_op();
    if (errors_.same_shape("activate_backward", y, dy) && errors_.same_shape("activate_backward", dy, dx))
      ACTORPS_CUDA_CHECK(
        gpu::launch_activate_backward(f, y.data, dy.data, dx.data, y.size(), stream_));
  }

  void softmax_xent(matrix logits, const float* labels, matrix grad, float* loss) override {
    compute_op();
    if (!errors_.same_shape("softmax_xent", logits, grad))
      return;
    if (float* scratch = scratch_for(logits.rows))
      ACTORPS_CUDA_CHECK(gpu::launch_softmax_xent(logits.data, labels, grad.data, loss, scratch,
                                                  logits.rows, logits.cols, stream_));
  }

  void count_correct(matrix logits, const float* labels, float* count) override {
    compute_op();
    if (float* scratch = scratch_for(logits.rows))
      ACTORPS_CUDA_CHECK(gpu::launch_count_correct(logits.data, labels, count, scratch,
                                                   logits.rows, logits.cols, stream_));
  }

  void apply_update(const optimizer_params& p, long t, size_t n, float* w, const float* g,
                    float* slot0, float* slot1) override {
    compute_op();
    ACTORPS_CUDA_CHECK(gpu::launch_apply_update(p, t, n, w, g, slot0, slot1, stream_));
  }

  void apply_update_rows(const optimizer_params& p, long t, size_t cols, const size_t* at, size_t count, float* w,
                         const float* g, float* slot0, float* slot1) override {
    compute_op();
    if (count == 0)
      return;
    static_assert(sizeof(size_t) == 2 * sizeof(float), "row offsets go to the device as pairs of floats' room");
    auto* device_at = reinterpret_cast<size_t*>(scratch_for(2 * count)); // (the rows' offsets, then one launch)
    if (device_at == nullptr)
      return;
    ACTORPS_CUDA_CHECK(cudaMemcpyAsync(device_at, at, count * sizeof(size_t), cudaMemcpyHostToDevice, stream_));
    ACTORPS_CUDA_CHECK(gpu::launch_apply_rows(p, t, cols, device_at, count, w, g, slot0, slot1, stream_));
  }

  void depthwise(const window_geometry& g, int n, const float* x, const float* w, float* y) override {
    compute_op();
    if (errors_.geometry_valid("depthwise", g))
      ACTORPS_CUDA_CHECK(gpu::launch_depthwise(g, n, x, w, y, stream_));
  }

  void depthwise_backward_input(const window_geometry& g, int n, const float* dy, const float* w, float* dx) override {
    compute_op();
    if (errors_.geometry_valid("depthwise_backward_input", g))
      ACTORPS_CUDA_CHECK(gpu::launch_depthwise_backward_input(g, n, dy, w, dx, stream_));
  }

  void depthwise_backward_weights(const window_geometry& g, int n, const float* x, const float* dy, float* dw) override {
    compute_op();
    if (!errors_.geometry_valid("depthwise_backward_weights", g))
      return;
    if (double* scratch = double_scratch(gpu::depthwise_weights_scratch(g, n)))
      ACTORPS_CUDA_CHECK(gpu::launch_depthwise_backward_weights(g, n, x, dy, dw, scratch, stream_));
  }

  void lrn(matrix x, const lrn_params& p, matrix y) override {
    compute_op();
    if (errors_.same_shape("lrn", x, y))
      ACTORPS_CUDA_CHECK(gpu::launch_lrn(x.data, x.rows, x.cols, p, y.data, stream_));
  }

  void lrn_backward(matrix x, matrix y, matrix dy, const lrn_params& p, matrix dx) override {
    compute_op();
    if (!errors_.same_shape("lrn_backward", x, y) || !errors_.same_shape("lrn_backward", y, dy) ||
        !errors_.same_shape("lrn_backward", dy, dx))
      return;
    if (dx.data != dy.data)
      return ACTORPS_CUDA_CHECK(gpu::launch_lrn_backward(x.data, y.data, dy.data, x.rows, x.cols, p, dx.data, stream_));
    // dx aliases dy: the kernel reads the neighbours' dy, so dy is copied aside first
    if (float* copy = scratch_for(dy.size())) {
      ACTORPS_CUDA_CHECK(cudaMemcpyAsync(copy, dy.data, dy.size() * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
      ACTORPS_CUDA_CHECK(gpu::launch_lrn_backward(x.data, y.data, copy, x.rows, x.cols, p, dx.data, stream_));
    }
  }

  void embedding_bag(const bag_geometry& g, const float* ids, const float* table, float* out) override {
    compute_op();
    ACTORPS_CUDA_CHECK(gpu::launch_embedding_bag(g, ids, table, out, stream_));
  }

  void embedding_bag_backward(const bag_geometry& g, const float* ids, const float* dout, float* dtable) override {
    compute_op();
    ACTORPS_CUDA_CHECK(gpu::launch_embedding_bag_backward(g, ids, dout, dtable, stream_));
  }

  void channel_moments(matrix x, float* mean, float* var) override {
    compute_op();
    if (double* scratch = double_scratch(gpu::batch_norm_scratch(x.rows, x.cols)))
      ACTORPS_CUDA_CHECK(gpu::launch_channel_moments(x.data, x.rows, x.cols, mean, var, scratch, stream_));
  }

  void batch_norm(matrix x, const float* mean, const float* var, const float* gamma, const float* beta, float eps,
                  matrix y) override {
    compute_op();
    if (errors_.same_shape("batch_norm", x, y))
      ACTORPS_CUDA_CHECK(gpu::launch_batch_norm(x.data, x.rows, x.cols, mean, var, gamma, beta, eps, y.data, stream_));
  }

  void batch_norm_backward(matrix x, matrix dy, const float* mean, const float* var, const float* gamma, float eps,
                           float* dgamma, float* dbeta, matrix dx) override {
    compute_op();
    if (!errors_.same_shape("batch_norm_backward", x, dy) || !errors_.same_shape("batch_norm_backward", dy, dx))
      return;
    if (double* scratch = double_scratch(gpu::batch_norm_scratch(x.rows, x.cols)))
      ACTORPS_CUDA_CHECK(gpu::launch_batch_norm_backward(x.data, dy.data, x.rows, x.cols, mean, var, gamma, eps, dgamma,
                                                         dbeta, dx.data, scratch, stream_));
  }

private:
  // Makes this backend's device the calling thread's current one: a backend may be used by
  // another thread than the one that made it (a tower's step runs on a thread of its own), and
  // CUDA launches, allocations and events go to the thread's current device.
  void current() {
    int device = -1;
    if (cudaGetDevice(&device) != cudaSuccess || device != device_)
      ACTORPS_CUDA_CHECK(cudaSetDevice(device_));
  }

  // The copy stream and the pinned staging (a device without room for them: an error), unless
  // compute.pinned-copies is off.
  caf::error init_staging(bool pinned) {
    if (!pinned)
      return caf::none;
    if (auto err = to_error(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking), "cudaStreamCreate (copies)"))
      return err;
    // (every event now, on this backend's device: a copy's thread may have another one current)
    spare_events_.resize(staging_events);
    for (auto* ev : {&compute_mark_, &copy_mark_})
      if (auto err = to_error(cudaEventCreateWithFlags(ev, cudaEventDisableTiming), "cudaEventCreate"))
        return err;
    for (auto& ev : spare_events_)
      if (auto err = to_error(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate"))
        return err;
    void* p = nullptr;
    if (auto err = to_error(cudaHostAlloc(&p, pinned_staging_bytes, cudaHostAllocPortable), "cudaHostAlloc")) {
      log_line(name(), cat("no pinned host memory for copies (", describe(err), "): they go from pageable memory"));
      return caf::none;
    }
    pinned_ = static_cast<char*>(p);
    ring_.emplace(pinned_staging_bytes);
    return caf::none;
  }

  // Before a copy between host and device: the copy stream waits for the work queued on the
  // compute stream since the last copy (which may still read or write the copy's memory).
  void copy_op() {
    current();
    if (ring_ && compute_queued_) {
      ACTORPS_CUDA_CHECK(cudaEventRecord(compute_mark_, stream_));
      ACTORPS_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, compute_mark_, 0));
      compute_queued_ = false;
    }
  }

  // Before an op on the compute stream: it waits for the uploads queued since the last op, all
  // at once.
  void compute_op() {
    current();
    if (copies_pending_) {
      ACTORPS_CUDA_CHECK(cudaEventRecord(copy_mark_, copy_stream_));
      ACTORPS_CUDA_CHECK(cudaStreamWaitEvent(stream_, copy_mark_, 0));
      copies_pending_ = false;
    }
    compute_queued_ = true;
  }

  // Calls f(done, piece) for `bytes` in consecutive pieces of at most the staging's chunk (done:
  // the bytes before the piece).
  template <class F>
  void in_pieces(size_t bytes, F f) {
    for (size_t done = 0; done < bytes;) {
      const size_t piece = std::min(bytes - done, ring_->chunk());
      f(done, piece);
      done += piece;
    }
  }

  // Room for `bytes` in the staging; while it is full, the oldest copy is waited for and
  // `landed(ticket)` told (a download copies its pieces up to that ticket out before their room
  // is taken again).
  template <class Landed>
  staging_ring::answer room_for(size_t bytes, Landed landed) {
    for (;;) {
      auto a = ring_->take(bytes);
      if (a.what == staging_ring::answer::kind::fits)
        return a;
      landed(a.ticket);
    }
  }

  // The same for an upload: the copies already completed give their room back first.
  staging_ring::answer room_for(size_t bytes) {
    retire_completed();
    return room_for(bytes, [this](uint64_t ticket) { wait_for(ticket); });
  }

  // Marks ticket's copy, just queued on the copy stream, with an event. Every event marking a
  // copy in flight: the oldest is waited for and marks this one (its ticket's room stays taken
  // until retire() reaches it: a download copies it out first).
  void sent(uint64_t ticket) {
    if (spare_events_.empty()) {
      ACTORPS_CUDA_CHECK(cudaEventSynchronize(in_flight_.front().second));
      spare_events_.push_back(in_flight_.front().second);
      in_flight_.pop_front();
    }
    cudaEvent_t ev = spare_events_.back();
    spare_events_.pop_back();
    ACTORPS_CUDA_CHECK(cudaEventRecord(ev, copy_stream_));
    in_flight_.emplace_back(ticket, ev);
  }

  // Waits until ticket's copy (and every older one) completed.
  void wait_for(uint64_t ticket) {
    for (auto& [t, ev] : in_flight_) {
      if (t > ticket) // (retired already)
        break;
      if (t == ticket) {
        ACTORPS_CUDA_CHECK(cudaEventSynchronize(ev));
        break;
      }
    }
    retire(ticket);
  }

  // The copies whose events have completed give their staging back (without waiting).
  void retire_completed() {
    uint64_t upto = 0;
    for (auto& [t, ev] : in_flight_) {
      if (cudaEventQuery(ev) != cudaSuccess)
        break;
      upto = t;
    }
    if (upto > 0)
      retire(upto);
  }

  // Tickets up to `ticket` are done: their staging is free, their events spare.
  void retire(uint64_t ticket) {
    while (!in_flight_.empty() && in_flight_.front().first <= ticket) {
      spare_events_.push_back(in_flight_.front().second);
      in_flight_.pop_front();
    }
    if (ring_)
      ring_->done(ticket);
  }

  // Returns device scratch space for n doubles (the scratch_for floats, twice as many).
  double* double_scratch(size_t n) {
    return reinterpret_cast<double*>(scratch_for(2 * n));
  }

  // Gives a buffer's memory back: to the arena, or to the device.
  void release(float* ptr) {
    if (arena_)
      arena_->give_back(static_cast<size_t>(reinterpret_cast<char*>(ptr) - block_));
    else
      cudaFree(ptr);
  }

  // Returns device scratch space for `rows` floats, growing it when needed; nullptr on failure.
  float* scratch_for(size_t rows) {
    if (scratch_.size() < rows) {
      scratch_ = buffer{};
      auto fresh = allocate(rows);
      if (!fresh) {
        errors_.record(std::move(fresh.error()));
        return nullptr;
      }
      scratch_ = std::move(*fresh);
    }
    return scratch_.data();
  }

  int device_ = 0;
  std::string device_name_;
  gpu_memory_policy policy_;
  char* block_ = nullptr;             // fraction: the memory reserved at start
  std::optional<memory_arena> arena_; // fraction: who holds which part of block_
  memory_meter meter_;
  cudaStream_t stream_ = nullptr;
  cudaStream_t copy_stream_ = nullptr; // host <-> device copies, through pinned_
  cudaEvent_t compute_mark_ = nullptr; // the copy stream waits for the compute stream's work so far
  cudaEvent_t copy_mark_ = nullptr;    // the compute stream waits for the uploads before it
  bool compute_queued_ = false;        // work queued on the compute stream since the last copy
  bool copies_pending_ = false;        // uploads the compute stream has not waited for yet
  char* pinned_ = nullptr;             // pinned_staging_bytes of page-locked host memory
  std::optional<staging_ring> ring_;   // who holds which part of pinned_ (none: pageable copies)
  std::deque<std::pair<uint64_t, cudaEvent_t>> in_flight_; // a ticket's copy, oldest first
  std::vector<cudaEvent_t> spare_events_;
  const gpu::cublas_functions* cublas_ = nullptr; // (set before blas_)
  cublasHandle_t blas_ = nullptr;
  buffer scratch_;
  op_errors errors_;
};

} // namespace

caf::expected<std::unique_ptr<backend>> make_cuda_backend(const device_options& opts) {
  auto count = cuda_device_count();
  if (!count)
    return std::move(count.error());
  if (opts.gpu_index < 0 || opts.gpu_index >= *count)
    return caf::make_error(errc::device_unavailable,
                           cat("compute.gpu-index = ", opts.gpu_index, " but this machine has ",
                               *count, " CUDA device(s)"));
  if (opts.gpu_memory.kind == gpu_memory_policy::mode::fraction &&
      !(opts.gpu_memory.fraction > 0.0 && opts.gpu_memory.fraction <= 1.0))
    return caf::make_error(errc::invalid_config, cat("compute.gpu-memory must be grow or fraction:F with F in (0, 1], got ",
                                                     to_string(opts.gpu_memory)));
  auto be = std::make_unique<cuda_backend>();
  if (auto err = be->init(opts))
    return err;
  return std::unique_ptr<backend>{std::move(be)};
}

} // namespace actorps
