// actorps-bench-compute: sgemm GFLOP/s on the reference model's shapes, the training step's
// examples/s at batch 50 and 512 (CPU backend, 1 thread by default), and the ratio of the
// trainer's FLOP rate to sgemm's, and one core's FMA peak (AVX2 and AVX-512, registers only: the
// ceiling of any implementation's FLOP rate), all measured in one run.
// Then the optimizers' host updates (compute/optimizer_rules): every rule on 1 Mi dense weights,
// and Adagrad's sparse update of 4,400 scattered rows of a 2^20 x 32 table (a text-hash step's
// rows on its ps node), in floats updated per second.
// Image presets (default cnn; e.g. "cnn,resnet20") each print one JSON line with their layers, so
// that a PyTorch twin can be built from it (bench/torch_train.py).
//   actorps-bench-compute [seconds-per-measurement=2] [threads=1] [presets=cnn]
#include "compute/blas_kernels.hpp"
#include "compute/cpu_backend.hpp"
#include "compute/optimizer_rules.hpp"
#include "data/batcher.hpp"
#include "data/dataset.hpp"
#include "model/init.hpp"
#include "model/network.hpp"
#include "model/mlp_spec.hpp"
#include "model/presets.hpp"
#include "model/optimizer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <array>
#include <random>
#include <string>
#include <vector>

#include <immintrin.h>

using namespace actorps;

namespace {

using clock_type = std::chrono::steady_clock;

struct gemm_shape {
  bool ta, tb;
  int m, n, k; // c is m x n, inner dimension k
};

// The gemms of one training step of spec at batch b (forward, weight gradients, input gradients).
std::vector<gemm_shape> step_gemms(const mlp_spec& spec, int b) { // dense layers only
  std::vector<gemm_shape> out;
  for (int l = 0; l < spec.layer_count(); ++l) {
    int in = spec.layer_inputs(l), outw = spec.layer_outputs(l);
    out.push_back({false, false, b, outw, in}); // forward
    out.push_back({true, false, in, outw, b});  // dW = x^T d
    if (l > 0)
      out.push_back({false, true, b, in, outw}); // dx = d W^T
  }
  return out;
}

double flops_of(const std::vector<gemm_shape>& shapes) {
  double f = 0;
  for (auto& s : shapes)
    f += 2.0 * s.m * s.n * s.k;
  return f;
}

// Runs fn repeatedly for about `seconds`; returns calls per second.
template <class F>
double rate(double seconds, F fn) {
  fn(); // warm-up
  long calls = 0;
  auto t0 = clock_type::now();
  double dt = 0;
  do {
    fn();
    ++calls;
    dt = std::chrono::duration<double>(clock_type::now() - t0).count();
  } while (dt < seconds);
  return calls / dt;
}

double sgemm_gflops(backend& be, const std::vector<gemm_shape>& shapes, double seconds) {
  std::vector<std::vector<buffer>> bufs;
  std::vector<std::array<matrix, 3>> mats;
  for (auto& s : shapes) {
    int ar = s.ta ? s.k : s.m, ac = s.ta ? s.m : s.k;
    int br = s.tb ? s.n : s.k, bc = s.tb ? s.k : s.n;
    std::vector<buffer> b3;
    b3.push_back(std::move(*be.allocate(size_t(ar) * ac)));
    b3.push_back(std::move(*be.allocate(size_t(br) * bc)));
    b3.push_back(std::move(*be.allocate(size_t(s.m) * s.n)));
    mats.push_back({b3[0].as_matrix(ar, ac), b3[1].as_matrix(br, bc), b3[2].as_matrix(s.m, s.n)});
    bufs.push_back(std::move(b3));
  }
  double per_sec = rate(seconds, [&] {
    for (size_t i = 0; i < shapes.size(); ++i)
      be.gemm(shapes[i].ta, shapes[i].tb, 1.0f, mats[i][0], mats[i][1], 0.0f, mats[i][2]);
  });
  return per_sec * flops_of(shapes) / 1e9;
}

// Synthetic data of the model's input shape (timing does not depend on pixel values).
dataset synthetic(int rows, image_shape shape, int classes) {
  dataset d;
  d.rows = rows;
  d.shape = shape;
  int cols = static_cast<int>(shape.size());
  d.cols = cols;
  d.max_label = classes - 1;
  std::mt19937 gen{7};
  std::uniform_real_distribution<float> px{0.0f, 1.0f};
  d.images.resize(size_t(rows) * cols);
  for (auto& v : d.images)
    v = px(gen);
  for (int i = 0; i < rows; ++i)
    d.labels.push_back(static_cast<float>(i % classes));
  return d;
}

double trainer_examples_per_second(backend& be, const model_spec& spec, const dataset& d, int batch,
                                   double seconds) {
  auto net = std::move(*network::make(be, spec, batch));
  (void) net->set_parameters(initial_values(spec, init_options{}, 1));
  optimizer_params p;
  auto opt = std::move(*optimizer::make(be, p, spec.variables()));
  batcher batches{d, partition_range(d.rows, 0, 1), batch, 1};
  std::vector<float> images(size_t(batch) * d.cols), labels(batch);
  double steps = rate(seconds, [&] {
    auto view = batches.next(images.data(), labels.data());
    net->load_batch(images.data(), labels.data(), view.rows);
    net->forward(true);
    net->backward();
    opt.apply(net->parameters(), net->gradients());
  });
  (void) be.sync();
  return steps * batch;
}

// One core's FMA peak: independent fused multiply-adds on registers only (no memory), 12 chains
// to hide the FMA latency; GFLOP/s (2 per lane per FMA). The callers check the CPU has them.
double peak_rate(long fmas, int lanes, std::chrono::duration<double> took) {
  return static_cast<double>(fmas) * lanes * 2 / took.count() / 1e9;
}

#define ACTORPS_FMA_PEAK(VEC, SET1, FMADD, LANES)                                                        \
  VEC a0 = SET1(0.1f), a1 = SET1(0.2f), a2 = SET1(0.3f), a3 = SET1(0.4f), a4 = SET1(0.5f), a5 = SET1(0.6f);  \
  VEC a6 = SET1(0.7f), a7 = SET1(0.8f), a8 = SET1(0.9f), a9 = SET1(1.0f), a10 = SET1(1.1f), a11 = SET1(1.2f); \
  const VEC m = SET1(0.999f);                                                                              \
  long fmas = 0;                                                                                           \
  const auto t0 = clock_type::now();                                                                       \
  while (clock_type::now() - t0 < std::chrono::duration<double>(seconds)) {                                \
    for (int i = 0; i < 100000; ++i) {                                                                     \
      a0 = FMADD(a0, m, m); a1 = FMADD(a1, m, m); a2 = FMADD(a2, m, m); a3 = FMADD(a3, m, m);             \
      a4 = FMADD(a4, m, m); a5 = FMADD(a5, m, m); a6 = FMADD(a6, m, m); a7 = FMADD(a7, m, m);             \
      a8 = FMADD(a8, m, m); a9 = FMADD(a9, m, m); a10 = FMADD(a10, m, m); a11 = FMADD(a11, m, m);         \
    }                                                                                                      \
    fmas += 12 * 100000;                                                                                   \
  }                                                                                                        \
  const auto took = clock_type::now() - t0;                                                                \
  const VEC all = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;                             \
  if (all[0] == 1.2345f) /* (keeps the chains alive) */                                                    \
    std::printf(" ");                                                                                      \
  return peak_rate(fmas, LANES, took);

__attribute__((target("avx2,fma"))) double avx2_peak(double seconds) {
  ACTORPS_FMA_PEAK(__m256, _mm256_set1_ps, _mm256_fmadd_ps, 8)
}

__attribute__((target("avx512f"))) double avx512_peak(double seconds) {
  ACTORPS_FMA_PEAK(__m512, _mm512_set1_ps, _mm512_fmadd_ps, 16)
}

#undef ACTORPS_FMA_PEAK

model_spec preset_model(const std::string& name) {
  model_spec spec;
  spec.layers = *parse_layers(find_preset(name)->layers);
  return spec;
}

} // namespace

// Floats updated per second by each rule on 1 Mi dense weights, and by Adagrad's sparse update
// of 4,400 distinct rows drawn from a 2^20 x 32 table.
void optimizer_rows(double seconds) {
  const size_t n = size_t{1} << 20;
  std::vector<float> w(n, 0.5f), g(n, 0.01f), s0(n, 0.1f), s1(n, 0.1f);
  std::printf("optimizer updates (Mi floats per second):");
  for (auto kind : {optimizer_kind::sgd, optimizer_kind::momentum, optimizer_kind::adam, optimizer_kind::adagrad,
                    optimizer_kind::rmsprop}) {
    optimizer_params p;
    p.kind = kind;
    p.learning_rate = 1e-6f;
    long t = 0;
    double r = rate(seconds / 8, [&] { apply_update_host(p, ++t, n, w.data(), g.data(), s0.data(), s1.data()); });
    std::printf(" %s %.0f", to_string(kind), r);
  }
  const size_t cols = 32, rows = size_t{1} << 20, touched = 4400;
  std::vector<float> table(rows * cols, 0.5f), accumulator(rows * cols, 0.1f), row_grads(touched * cols, 0.01f);
  std::vector<size_t> at;
  std::mt19937_64 rng{7};
  std::vector<char> taken(rows, 0);
  while (at.size() < touched) {
    const size_t row = rng() % rows;
    if (!taken[row]++)
      at.push_back(row * cols);
  }
  optimizer_params p;
  p.kind = optimizer_kind::adagrad;
  p.learning_rate = 1e-6f;
  long t = 0;
  double r = rate(seconds / 4, [&] {
    apply_rows_host(p, ++t, cols, at.data(), at.size(), table.data(), row_grads.data(), accumulator.data(), nullptr);
  });
  std::printf("; adagrad on %zu rows of 2^20 x %zu: %.0f updates/s (%.0f Mi floats per second)\n", touched, cols, r,
              r * static_cast<double>(touched * cols) / double(1 << 20));
}

int main(int argc, char** argv) {
  actorps::reexec_with_better_blas(argv);
  double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  auto be = make_cpu_backend(threads);
  model_spec reference = preset_model("reference");
  mlp_spec dense = *dense_stack(reference);
  dataset d = synthetic(12800, reference.input, reference.classes());
  std::printf("backend: %s; %.1f s per measurement\n", be->name().c_str(), seconds);
  __builtin_cpu_init();
  const double p2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? avx2_peak(seconds / 4) : 0.0;
  const double p512 = __builtin_cpu_supports("avx512f") ? avx512_peak(seconds / 4) : 0.0;
  std::printf("one core's FMA peak (registers only): AVX2 %.1f GFLOP/s, AVX-512 %.1f GFLOP/s\n", p2, p512);
  std::printf("{\"fma_peak_gflops\": {\"avx2\": %.1f, \"avx512\": %.1f}}\n", p2, p512);
  std::printf("reference model 784 -> 5x160 elu -> 10:\n");
  std::printf("%-6s %14s %16s %20s %14s\n", "batch", "sgemm GFLOP/s", "train examples/s",
              "train GFLOP/s (gemm)", "train/sgemm");
  for (int batch : {50, 512}) {
    auto shapes = step_gemms(dense, batch);
    double gf = sgemm_gflops(*be, shapes, seconds);
    double eps = trainer_examples_per_second(*be, reference, d, batch, seconds);
    double train_gf = eps * flops_of(shapes) / batch / 1e9;
    std::printf("%-6d %14.1f %16.0f %20.1f %14.2f\n", batch, gf, eps, train_gf, train_gf / gf);
    std::printf("{\"model\": \"reference\", \"batch\": %d, \"examples_per_second\": %.0f}\n", batch, eps);
  }
  optimizer_rows(seconds);
  const std::string presets = argc > 3 ? argv[3] : "cnn";
  for (size_t at = 0; at < presets.size();) {
    const size_t comma = std::min(presets.find(',', at), presets.size());
    const std::string name = presets.substr(at, comma - at);
    at = comma + 1;
    if (!find_preset(name)) {
      std::fprintf(stderr, "actorps-bench-compute: no preset \"%s\" (%s)\n", name.c_str(), preset_names().c_str());
      return 2;
    }
    model_spec spec = preset_model(name.c_str());
    double eps = trainer_examples_per_second(*be, spec, d, 50, seconds);
    double gflops = eps * 3.0 * 2.0 * static_cast<double>(spec.forward_macs()) / 1e9;
    std::printf("%s preset, batch 50: %.0f examples/s (%.1f GFLOP/s counting 3 x forward multiply-adds)\n", name.c_str(),
                eps, gflops);
    std::string layers;
    for (auto& text : spec.layer_texts())
      layers += (layers.empty() ? "\"" : ", \"") + text + "\"";
    std::printf("{\"model\": \"%s\", \"batch\": 50, \"examples_per_second\": %.0f, \"gflop_per_example\": %.6f, "
                "\"input\": [%d, %d, %d], \"layers\": [%s]}\n",
                name.c_str(), eps, 6.0 * static_cast<double>(spec.forward_macs()) / 1e9, spec.input.height,
                spec.input.width, spec.input.channels, layers.c_str());
  }
  return 0;
}
