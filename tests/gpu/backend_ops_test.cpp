// Every backend op on every backend, compared with the CPU backend (the llama.cpp
// test-backend-ops idea): the GPU's (skipped, with the reason printed, where no device exists)
// and, on every machine, a backend without a single kernel, whose every op soft placement
// stages through the host onto the CPU.
#include "common/errc.hpp"
#include "compute/cpu_backend.hpp"
#include "gpu/device_select.hpp"
#include "model/init.hpp"
#include "model/network.hpp"
#include "compute/soft_placement.hpp"
#include "compute/token_ids.hpp"
#include "model/presets.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/lacking_backend.hpp"

#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <functional>
#include <random>
#include <thread>

using namespace actorps;
using actorps::test::error_text;
using actorps::test::random_values;
namespace utf = boost::unit_test;

namespace {

using values = std::vector<std::vector<float>>;
using op_fn = std::function<void(backend&, std::vector<buffer>&)>;

// Uploads inputs to be, runs op, and returns every buffer's contents afterwards.
values run_on(backend& be, const values& inputs, const op_fn& op) {
  std::vector<buffer> bufs;
  for (auto& v : inputs) {
    bufs.push_back(std::move(*be.allocate(v.size())));
    be.upload(v.data(), v.size(), bufs.back().data());
  }
  op(be, bufs);
  values out;
  for (auto& b : bufs) {
    out.emplace_back(b.size());
    auto err = be.download(b.data(), b.size(), out.back().data());
    BOOST_REQUIRE_MESSAGE(!err, be.name() << ": " << describe(err));
  }
  return out;
}

// The backends compared with the CPU: make() gives one, or an error saying why there is none.
struct on_gpu {
  static caf::expected<std::unique_ptr<backend>> make() {
    device_options opts;
    opts.mode = device_mode::gpu;
    return make_cuda_backend(opts);
  }
};

struct without_kernels {
  static caf::expected<std::unique_ptr<backend>> make() {
    return place_softly(std::make_unique<test::lacking_backend>(test::lacking_backend::every_op()), true, 1, "test");
  }
};

using devices = boost::mpl::list<on_gpu, without_kernels>;

// A window over square inputs: in x in x c to out x out, k x k moved by stride, padded by pad.
window_geometry square_window(int in, int c, int out, int k, int stride, int pad) {
  window_geometry g;
  g.in_h = g.in_w = in;
  g.channels = c;
  g.out_h = g.out_w = out;
  g.k_h = g.k_w = k;
  g.stride = stride;
  g.pad_top = g.pad_left = pad;
  return g;
}

template <class Device>
struct compare_fixture {
  std::unique_ptr<backend> cpu = make_cpu_backend(1);
  std::unique_ptr<backend> other; // none: the case is skipped

  compare_fixture() {
    auto be = Device::make();
    if (!be) {
      BOOST_TEST_MESSAGE("skipped: " << describe(be.error()));
      return;
    }
    other = std::move(*be);
    BOOST_TEST_MESSAGE("comparing " << other->name() << " with " << cpu->name());
  }

  // Runs op on both backends and compares every buffer within tol (relative to magnitude): one
  // check per buffer, naming how many values differ and the first of them.
  void compare(const std::string& what, const values& inputs, const op_fn& op, float tol = 1e-5f) {
    auto want = run_on(*cpu, inputs, op);
    auto got = run_on(*other, inputs, op);
    for (size_t b = 0; b < want.size(); ++b) {
      size_t wrong = 0, first = 0;
      for (size_t i = 0; i < want[b].size(); ++i) {
        const float w = want[b][i], g = got[b][i];
        if (!(std::fabs(w - g) <= tol * (1.0f + std::fabs(w))) && wrong++ == 0) // (NaN differs too)
          first = i;
      }
      BOOST_TEST(wrong == 0u, what << ": buffer " << b << ": " << wrong << " of " << want[b].size() << " values differ, first ["
                                   << first << "] cpu " << want[b][first] << ", " << other->name() << " " << got[b][first]);
    }
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(backend_ops)

BOOST_AUTO_TEST_CASE_TEMPLATE(gemm_every_transpose_and_shape, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  for (auto [m, n, k] : {std::tuple{7, 5, 9}, std::tuple{50, 160, 784}, std::tuple{512, 10, 160}})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
        values in = {random_values(size_t(ar) * ac, 1), random_values(size_t(br) * bc, 2),
                     random_values(size_t(m) * n, 3)};
        f.compare("gemm", in, [=](backend& be, std::vector<buffer>& b) {
          be.gemm(ta, tb, 0.7f, b[0].as_matrix(ar, ac), b[1].as_matrix(br, bc), 0.3f,
                  b[2].as_matrix(m, n));
        }, 1e-4f);
      }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(bias_rows_axpy_scale_copy, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  values in = {random_values(50 * 160, 4), random_values(160, 5), random_values(160, 6),
               random_values(50 * 160, 7)};
  f.compare("add_bias+sum_rows+axpy+scale+copy", in, [](backend& be, std::vector<buffer>& b) {
    be.add_bias(b[0].as_matrix(50, 160), b[1].data());
    be.sum_rows(b[0].as_matrix(50, 160), b[2].data());
    be.axpy(50 * 160, -0.25f, b[0].data(), b[3].data());
    be.scale(160, 3.0f, b[1].data());
    be.copy(b[3].data(), 100, b[0].data() + 7);
  });
}

BOOST_AUTO_TEST_CASE_TEMPLATE(activations_forward_and_backward, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  for (auto act : all_activations) {
    values in = {random_values(3000, 8, -20.0f, 20.0f), std::vector<float>(3000),
                 random_values(3000, 9), std::vector<float>(3000)};
    f.compare(to_string(act), in, [act](backend& be, std::vector<buffer>& b) {
      be.activate(act, b[0].as_matrix(30, 100), b[1].as_matrix(30, 100));
      be.activate_backward(act, b[1].as_matrix(30, 100), b[2].as_matrix(30, 100),
                           b[3].as_matrix(30, 100));
    });
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(softmax_xent_and_count_correct, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  const int rows = 1000, cols = 10;
  std::vector<float> labels(rows);
  for (int i = 0; i < rows; ++i)
    labels[i] = static_cast<float>((i * 7) % cols);
  values in = {random_values(rows * cols, 10, -8.0f, 8.0f), labels, std::vector<float>(rows * cols),
               {0.0f}, {0.0f}};
  f.compare("softmax_xent", in, [](backend& be, std::vector<buffer>& b) {
    be.softmax_xent(b[0].as_matrix(rows, cols), b[1].data(), b[2].as_matrix(rows, cols), b[3].data());
    be.count_correct(b[0].as_matrix(rows, cols), b[1].data(), b[4].data());
  });
}

BOOST_AUTO_TEST_CASE_TEMPLATE(optimizer_updates, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  for (auto kind : all_optimizers) {
    optimizer_params p;
    p.kind = kind;
    p.schedule = lr_schedule::exponential;
    p.decay_rate = 0.5f;
    p.decay_steps = 2;
    p.weight_decay = 0.01f;
    values in = {random_values(5000, 11), random_values(5000, 12),
                 std::vector<float>(5000, slot_initial_value(p, 0)), std::vector<float>(5000)};
    f.compare(to_string(kind), in, [p](backend& be, std::vector<buffer>& b) {
      for (long t = 1; t <= 3; ++t)
        be.apply_update(p, t, 5000, b[0].data(), b[1].data(), b[2].data(), b[3].data());
    });
  }
}

// An embedding table's sparse update: the named rows (scattered, out of order) move as the dense
// rule moves them, every other row and its slots stay.
BOOST_AUTO_TEST_CASE_TEMPLATE(optimizer_updates_of_rows, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  const size_t rows = 300, cols = 17;
  std::vector<size_t> at;
  for (size_t r : {299u, 3u, 150u, 0u, 77u, 78u, 200u, 12u, 250u})
    at.push_back(r * cols);
  for (auto kind : all_optimizers) {
    optimizer_params p;
    p.kind = kind;
    p.weight_decay = 0.01f;
    values in = {random_values(rows * cols, 21), random_values(at.size() * cols, 22),
                 std::vector<float>(rows * cols, slot_initial_value(p, 0)), std::vector<float>(rows * cols)};
    f.compare(std::string{"rows "} + to_string(kind), in, [p, at](backend& be, std::vector<buffer>& b) {
      for (long t = 1; t <= 3; ++t)
        be.apply_update_rows(p, t, cols, at.data(), at.size(), b[0].data(), b[1].data(), b[2].data(), b[3].data());
    });
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(im2col_col2im_and_max_pooling, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  // the geometries of the cnn preset's layers, a strided same conv and an overlapping pool
  struct case_t { window_geometry g; const char* what; };
  for (auto [g, what] : {case_t{square_window(28, 1, 28, 3, 1, 1), "conv 28x28x1 3x3 same"},
                         case_t{square_window(14, 32, 14, 3, 1, 1), "conv 14x14x32 3x3 same"},
                         case_t{square_window(9, 3, 5, 3, 2, 1), "conv 9x9x3 3x3 stride 2 same"},
                         case_t{square_window(28, 32, 14, 2, 2, 0), "pool 2"},
                         case_t{square_window(7, 4, 3, 3, 2, 0), "pool 3 stride 2"}}) {
    const int n = 3;
    size_t cols = size_t(n) * g.positions() * g.window_size(), out = size_t(n) * g.positions() * g.channels;
    values in = {random_values(n * g.in_size(), 14, -1.0f, 1.0f), std::vector<float>(cols),
                 random_values(cols, 15), std::vector<float>(n * g.in_size())};
    f.compare(std::string{"im2col+col2im "} + what, in, [g = g](backend& be, std::vector<buffer>& b) {
      be.im2col(g, n, b[0].data(), b[1].data());
      be.col2im(g, n, b[2].data(), b[3].data());
    });
    values pool = {in[0], std::vector<float>(out), std::vector<float>(out), random_values(out, 16),
                   std::vector<float>(n * g.in_size())};
    f.compare(std::string{"maxpool "} + what, pool, [g = g](backend& be, std::vector<buffer>& b) {
      be.maxpool(g, n, b[0].data(), b[1].data(), b[2].data());
      be.maxpool_backward(g, n, b[3].data(), b[2].data(), b[4].data());
    });
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(dropout_and_multiply, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  values in = {random_values(10000, 17), std::vector<float>(10000), std::vector<float>(10000)};
  f.compare("dropout+multiply", in, [](backend& be, std::vector<buffer>& b) {
    be.dropout(10000, 0.3f, 1234, b[0].data(), b[1].data(), b[2].data());
    be.multiply(10000, b[1].data(), b[2].data(), b[0].data());
  });
}

BOOST_AUTO_TEST_CASE_TEMPLATE(depthwise_convolution_and_its_gradients, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  for (auto g : {square_window(28, 32, 28, 3, 1, 1), square_window(14, 64, 7, 3, 2, 0), square_window(9, 5, 9, 5, 1, 2)}) {
    const int n = 3;
    const size_t in = n * g.in_size(), out = size_t(n) * g.positions() * g.channels, filters = size_t(g.k_h) * g.k_w * g.channels;
    values vals = {random_values(in, 40), random_values(filters, 41), std::vector<float>(out), random_values(out, 42),
                   std::vector<float>(in), std::vector<float>(filters)};
    f.compare("depthwise " + std::to_string(g.in_h) + "x" + std::to_string(g.channels), vals, [g, n](backend& be, std::vector<buffer>& b) {
      be.depthwise(g, n, b[0].data(), b[1].data(), b[2].data());
      be.depthwise_backward_input(g, n, b[3].data(), b[1].data(), b[4].data());
      be.depthwise_backward_weights(g, n, b[0].data(), b[3].data(), b[5].data());
    }, 1e-4f);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(local_response_normalisation, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  for (lrn_params p : {lrn_params{}, lrn_params{4, 1.0f, 0.001f / 9.0f, 0.75f}}) {
    const int rows = 50 * 12 * 12, cols = 64;
    const size_t n = size_t(rows) * cols;
    values in = {random_values(n, 60, -4.0f, 4.0f), std::vector<float>(n), random_values(n, 61), std::vector<float>(n),
                 random_values(n, 62)};
    f.compare("lrn radius " + std::to_string(p.radius), in, [=](backend& be, std::vector<buffer>& b) {
      be.lrn(b[0].as_matrix(rows, cols), p, b[1].as_matrix(rows, cols));
      be.lrn_backward(b[0].as_matrix(rows, cols), b[1].as_matrix(rows, cols), b[2].as_matrix(rows, cols), p,
                      b[3].as_matrix(rows, cols));
      be.lrn_backward(b[0].as_matrix(rows, cols), b[1].as_matrix(rows, cols), b[4].as_matrix(rows, cols), p,
                      b[4].as_matrix(rows, cols)); // (in place)
    }, 1e-4f);
  }
}

// Embedding bags: examples of 0 to 400 ids (repeats included) over a table of 4096 x 32, mean and
// sum; backward's stale rows stay as they were (its sums run in another order on a GPU).
BOOST_AUTO_TEST_CASE_TEMPLATE(embedding_bags_forward_and_backward, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  const int rows = 50, tokens = 400, table_rows = 4096, dim = 32;
  std::vector<float> ids(size_t(rows) * tokens, 0.0f);
  std::mt19937 gen{5};
  for (int r = 0; r < rows; ++r) {
    const int n = r * tokens / (rows - 1); // (row 0: no ids; the last: every slot)
    for (int t = 0; t < n; ++t)
      ids[size_t(r) * tokens + t] = encode_token(static_cast<uint32_t>(gen() % (3 * table_rows)));
  }
  for (bool mean : {true, false}) {
    const bag_geometry g{rows, tokens, table_rows, dim, mean};
    values in = {ids, random_values(size_t(table_rows) * dim, 70), std::vector<float>(size_t(rows) * dim),
                 random_values(size_t(rows) * dim, 71), random_values(size_t(table_rows) * dim, 72)};
    f.compare(mean ? "embedding bag mean" : "embedding bag sum", in, [=](backend& be, std::vector<buffer>& b) {
      be.embedding_bag(g, b[0].data(), b[1].data(), b[2].data());
      be.embedding_bag_backward(g, b[0].data(), b[3].data(), b[4].data());
    }, 1e-4f);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(batch_norm_moments_forward_and_backward, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  for (auto [rows, cols] : {std::pair{37, 5}, std::pair{50 * 8 * 8, 16}, std::pair{1000, 64}, std::pair{3, 300}}) {
    const size_t n = size_t(rows) * cols;
    values in = {random_values(n, 30, -2.0f, 6.0f), std::vector<float>(cols), std::vector<float>(cols),
                 random_values(cols, 31, 0.5f, 2.0f), random_values(cols, 32), std::vector<float>(n),
                 random_values(n, 33), std::vector<float>(cols), std::vector<float>(cols), std::vector<float>(n)};
    f.compare("batch_norm " + std::to_string(rows) + "x" + std::to_string(cols), in, [=](backend& be, std::vector<buffer>& b) {
      be.channel_moments(b[0].as_matrix(rows, cols), b[1].data(), b[2].data());
      be.batch_norm(b[0].as_matrix(rows, cols), b[1].data(), b[2].data(), b[3].data(), b[4].data(), 0.001f,
                    b[5].as_matrix(rows, cols));
      be.batch_norm_backward(b[0].as_matrix(rows, cols), b[6].as_matrix(rows, cols), b[1].data(), b[2].data(), b[3].data(),
                             0.001f, b[7].data(), b[8].data(), b[9].as_matrix(rows, cols));
    }, 1e-4f);
  }
}

// A backend made on one thread and used from another (a tower's step runs on a thread of its
// own): every call makes its device current. Only a machine with two GPUs tells (a fresh
// thread's current device is the first); elsewhere it is skipped, saying why.
BOOST_AUTO_TEST_CASE(a_backend_on_the_second_gpu_computes_from_another_thread) {
  auto count = cuda_device_count();
  if (!count || *count < 2) {
    BOOST_TEST_MESSAGE("skipped: " << (count ? "one CUDA device" : describe(count.error())));
    return;
  }
  device_options opts;
  opts.mode = device_mode::gpu;
  opts.gpu_index = 1;
  auto be = make_cuda_backend(opts);
  BOOST_REQUIRE_MESSAGE(be, describe(be.error()));
  auto cpu = make_cpu_backend(1);
  values in = {random_values(50 * 160, 21), random_values(160, 22)};
  auto op = [](backend& b, std::vector<buffer>& bufs) {
    b.add_bias(bufs[0].as_matrix(50, 160), bufs[1].data());
    b.scale(160, 2.0f, bufs[1].data());
  };
  auto want = run_on(*cpu, in, op);
  values got;
  std::thread other{[&] { got = run_on(**be, in, op); }}; // (its current device: the first)
  other.join();
  BOOST_REQUIRE(got.size() == want.size());
  for (size_t b = 0; b < want.size(); ++b)
    BOOST_TEST(got[b] == want[b], boost::test_tools::per_element());
}

// The CUDA backend's copies go through 8 MiB of pinned staging on their own stream, in pieces
// of 2 MiB: a 12 MiB upload waits for the staging to come back, an upload into a buffer that
// queued ops still read waits for them, the ops after it see its values, and the host buffer is
// free when upload returns.
BOOST_AUTO_TEST_CASE_TEMPLATE(copies_in_pieces_keep_their_order_with_the_ops, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  const size_t big = (size_t{3} << 20) + 77;
  values in = {random_values(big, 8), random_values(big, 9)};
  const auto host = random_values(big, 10);
  f.compare("uploads and downloads in pieces", in, [&](backend& be, std::vector<buffer>& b) {
    be.scale(big, 0.5f, b[0].data());
    be.axpy(big, 1.0f, b[0].data(), b[1].data()); // (reads b[0] before the upload below replaces it)
    std::vector<float> h = host;
    be.upload(h.data(), big, b[0].data());
    std::fill(h.begin(), h.end(), 7.0f); // (the upload's bytes were taken)
    be.axpy(big, -2.0f, b[0].data(), b[1].data());
    be.upload(h.data() + 5, 1000, b[0].data() + 11);
    be.scale(2000, 3.0f, b[0].data());
  });
}

BOOST_AUTO_TEST_CASE_TEMPLATE(reference_and_cnn_steps_match_cpu, Device, devices) {
  compare_fixture<Device> f;
  if (!f.other)
    return;
  for (auto preset : {"reference", "cnn"}) {
    model_spec spec;
    spec.layers = *parse_layers(find_preset(preset)->layers);
    auto init = initial_values(spec, init_options{}, 5);
    const int rows = 32;
    auto images = random_values(rows * 784, 13, 0.0f, 1.0f);
    std::vector<float> labels(rows);
    for (int i = 0; i < rows; ++i)
      labels[i] = static_cast<float>(i % 10);
    values grads[2];
    double loss[2];
    backend* bes[2] = {f.cpu.get(), f.other.get()};
    for (int k = 0; k < 2; ++k) {
      auto net = std::move(*network::make(*bes[k], spec, rows));
      BOOST_REQUIRE(!net->set_parameters(init));
      net->load_batch(images.data(), labels.data(), rows);
      net->forward(true);
      net->backward();
      BOOST_REQUIRE(!net->get_gradients(grads[k]));
      loss[k] = net->take_metrics()->loss;
    }
    BOOST_TEST(loss[0] == loss[1], boost::test_tools::tolerance(1e-5));
    for (size_t v = 0; v < grads[0].size(); ++v) {
      size_t wrong = 0, first = 0;
      for (size_t i = 0; i < grads[0][v].size(); ++i)
        if (!(std::fabs(grads[0][v][i] - grads[1][v][i]) <= 1e-3f * (1e-2f + std::fabs(grads[0][v][i]))) && wrong++ == 0)
          first = i;
      BOOST_TEST(wrong == 0u, preset << " " << spec.variables()[v].name << ": " << wrong << " gradients differ, first [" << first
                                     << "] cpu " << grads[0][v][first] << ", " << f.other->name() << " " << grads[1][v][first]);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
