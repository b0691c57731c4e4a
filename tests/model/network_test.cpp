// Tests of model/network: finite-difference gradient checks of every layer type (dense, conv with
// same / valid padding and strides, max pooling, dropout) and every activation, the loss
// gradient, dropout's training-only masks, and batch handling.
#include "model/network.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/cpu_backend.hpp"
#include "compute/optimizer_rules.hpp"
#include "compute/token_ids.hpp"
#include "model/init.hpp"
#include "model/presets.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <tuple>

using namespace actorps;
using actorps::test::random_values;

namespace {

constexpr int batch = 3;
using values = std::vector<std::vector<float>>;

model_spec layers_model(image_shape input, std::vector<std::string> texts) {
  model_spec spec;
  spec.input = input;
  spec.layers = *parse_layers(texts);
  BOOST_REQUIRE_MESSAGE(spec.validate().empty(), spec.validate());
  return spec;
}

struct fixture {
  std::unique_ptr<backend> be = make_cpu_backend(1);
  std::vector<float> labels = {0, 2, 1};

  // The batch's mean loss at params; training passes use a fresh network with the same dropout
  // seed, so every evaluation sees the same masks.
  double loss_at(const model_spec& spec, const values& params, const std::vector<float>& images,
                 bool training) {
    auto net = std::move(*actorps::network::make(*be, spec, batch, 77));
    BOOST_REQUIRE(!net->set_parameters(params));
    net->load_batch(images.data(), labels.data(), batch);
    net->forward(training);
    net->score();
    return net->take_metrics()->loss;
  }

  // Compares every analytic gradient of spec with central differences.
  void check_gradients(const model_spec& spec, bool training, const std::string& what) {
    auto images = random_values(batch * spec.input.size(), 21, -1.0f, 1.0f);
    init_options init;
    init.scheme = init_scheme::he;
    auto params = initial_values(spec, init, 3);
    auto vars = spec.variables();
    for (size_t v = 0; v < params.size(); ++v) { // all but the weights away from their start, so their gradients matter
      const bool around_one = ends_with(vars[v].name, "/gamma") || ends_with(vars[v].name, "/moving_variance");
      if (!ends_with(vars[v].name, "/weights"))
        params[v] = around_one ? random_values(params[v].size(), 30 + v, 0.5f, 1.5f)
                               : random_values(params[v].size(), 30 + v, -0.3f, 0.3f);
    }
    auto net = std::move(*actorps::network::make(*be, spec, batch, 77));
    BOOST_REQUIRE(!net->set_parameters(params));
    net->load_batch(images.data(), labels.data(), batch);
    net->forward(training);
    net->backward();
    values grads;
    BOOST_REQUIRE(!net->get_gradients(grads));
    const float eps = 1e-3f;
    for (size_t v = 0; v < params.size(); ++v)
      for (size_t i = 0; i < params[v].size() && !is_moving_statistic(vars[v].name); ++i) {
        auto plus = params, minus = params;
        plus[v][i] += eps;
        minus[v][i] -= eps;
        double numeric = (loss_at(spec, plus, images, training) - loss_at(spec, minus, images, training)) / (2 * eps);
        BOOST_TEST(std::fabs(grads[v][i] - numeric) <= 5e-4 + 2e-2 * std::fabs(numeric),
                   what << ": " << vars[v].name << "[" << i << "]: analytic " << grads[v][i]
                        << " numeric " << numeric);
      }
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(network, fixture)

BOOST_AUTO_TEST_CASE(dense_layers_match_finite_differences_for_every_activation) {
  for (auto f : all_activations) {
    std::string act = to_string(f);
    check_gradients(layers_model({1, 1, 6}, {"dense 5 " + act, "dense 4 " + act, "dense 3"}), false, act);
  }
}

BOOST_AUTO_TEST_CASE(conv_and_pool_layers_match_finite_differences) {
  check_gradients(layers_model({6, 6, 2}, {"conv 3x3x3 tanh", "maxpool 2", "dense 3"}), false,
                  "conv same + maxpool 2");
  check_gradients(layers_model({7, 7, 1}, {"conv 3x3x2 stride 2 valid leaky-relu", "maxpool 2 stride 1",
                                           "conv 2x2x2 elu", "dense 3"}),
                  false, "conv valid stride 2 + overlapping pool + conv even kernel");
  check_gradients(layers_model({5, 5, 2}, {"conv 3x3x2 stride 2 sigmoid", "maxpool 2 same", "dense 3"}),
                  false, "conv same stride 2 + same pool");
  // 8 channels and more: the CPU's direct convolution on CPUs with AVX-512 (compute/direct_conv)
  check_gradients(layers_model({5, 4, 8}, {"conv 3x3x8 tanh", "conv 3x3x9 elu", "conv 3x3x4 stride 2", "conv 1x1x3",
                                           "dense 3"}),
                  false, "convs on 8 and 9 channels, same, stride 2 and 1x1");
}

// (in training: the gradient flows through the batch's moments, as TF's training graph has it)
BOOST_AUTO_TEST_CASE(batchnorm_matches_finite_differences) {
  check_gradients(layers_model({4, 4, 2}, {"conv 3x3x3", "batchnorm relu", "dense 3"}), true, "conv + batchnorm");
  check_gradients(layers_model({1, 1, 6}, {"dense 5", "batchnorm elu", "dense 3"}), true, "dense + batchnorm");
  check_gradients(layers_model({3, 3, 2}, {"batchnorm", "dense 3"}), true, "batchnorm first");
}

BOOST_AUTO_TEST_CASE(depthwise_and_separable_convolutions_match_finite_differences) {
  check_gradients(layers_model({5, 5, 3}, {"depthwise 3x3 tanh", "dense 3"}), false, "depthwise same");
  check_gradients(layers_model({7, 6, 2}, {"conv 3x3x3 elu", "depthwise 3x3 stride 2 valid relu", "dense 3"}), false,
                  "depthwise valid stride 2");
  check_gradients(layers_model({5, 5, 3}, {"separable 3x3x4 tanh", "separable 3x3x2 stride 2", "dense 3"}), false,
                  "separable same, stride 2");
  check_gradients(layers_model({6, 6, 2}, {"residual [separable 3x3x4, batchnorm relu, separable 3x3x4, batchnorm, maxpool 3 stride 2 same] relu",
                                           "dense 3"}),
                  true, "an xception block");
}

BOOST_AUTO_TEST_CASE(local_response_normalisation_matches_finite_differences) {
  check_gradients(layers_model({3, 3, 7}, {"conv 3x3x9 tanh", "lrn radius 2 alpha 0.3 beta 0.75", "dense 3"}), false, "lrn");
  check_gradients(layers_model({2, 2, 6}, {"lrn", "dense 3"}), false, "lrn with TF's defaults, first");
}

BOOST_AUTO_TEST_CASE(global_average_pooling_matches_finite_differences) {
  check_gradients(layers_model({4, 3, 2}, {"conv 3x3x3 tanh", "avgpool global", "dense 3"}), false, "avgpool global");
  check_gradients(layers_model({5, 5, 1}, {"avgpool global", "dense 3"}), false, "avgpool global first");
}

BOOST_AUTO_TEST_CASE(residual_blocks_match_finite_differences) {
  check_gradients(layers_model({4, 4, 2}, {"conv 3x3x3 relu", "residual [conv 3x3x3 tanh, conv 3x3x3] elu", "dense 3"}), false,
                  "identity shortcut");
  check_gradients(layers_model({4, 4, 2}, {"residual [conv 3x3x4 stride 2, batchnorm relu, conv 3x3x4, batchnorm] relu",
                                           "avgpool global", "dense 3"}),
                  true, "projection shortcut, first layer, batchnorm inside, training");
  check_gradients(layers_model({1, 1, 5}, {"residual [dense 5 tanh, dropout 0.3, dense 5] elu", "dense 3"}), true,
                  "a dense block with dropout");
}

BOOST_AUTO_TEST_CASE(batchnorm_reports_the_batch_moments_as_its_moving_statistics_gradients) {
  auto spec = layers_model({2, 2, 3}, {"batchnorm", "dense 3"});
  auto images = random_values(batch * spec.input.size(), 5, -1.0f, 3.0f);
  auto net = std::move(*actorps::network::make(*be, spec, batch, 1));
  BOOST_REQUIRE(!net->set_parameters(initial_values(spec, {}, 1)));
  net->load_batch(images.data(), labels.data(), batch);
  net->forward(true);
  net->backward();
  values grads;
  BOOST_REQUIRE(!net->get_gradients(grads));
  for (int c = 0; c < 3; ++c) {
    double sum = 0, sq = 0;
    for (int i = 0; i < batch * 4; ++i)
      sum += images[static_cast<size_t>(i * 3 + c)];
    const double mean = sum / (batch * 4);
    for (int i = 0; i < batch * 4; ++i)
      sq += (images[static_cast<size_t>(i * 3 + c)] - mean) * (images[static_cast<size_t>(i * 3 + c)] - mean);
    BOOST_TEST(grads[2][c] == mean, boost::test_tools::tolerance(1e-5)); // bn0/moving_mean
    BOOST_TEST(grads[3][c] == sq / (batch * 4), boost::test_tools::tolerance(1e-5)); // bn0/moving_variance
  }
  // evaluation normalises with the moving statistics: with mean 0 and variance 1 (their start)
  // and gamma 1, beta 0 the layer passes x / sqrt(1 + eps)
  net->forward(false);
  std::vector<float> logits_eval;
  BOOST_REQUIRE(!net->download_logits(logits_eval));
  auto plain = layers_model({2, 2, 3}, {"dense 3"});
  auto direct = std::move(*actorps::network::make(*be, plain, batch, 1));
  values all;
  BOOST_REQUIRE(!net->get_parameters(all));
  auto w = all[4];
  for (auto& x : w)
    x /= std::sqrt(1.0f + batchnorm_epsilon);
  BOOST_REQUIRE(!direct->set_parameters({w, all[5]}));
  direct->load_batch(images.data(), labels.data(), batch);
  direct->forward(false);
  std::vector<float> logits_direct;
  BOOST_REQUIRE(!direct->download_logits(logits_direct));
  for (size_t i = 0; i < logits_eval.size(); ++i)
    BOOST_TEST(logits_eval[i] == logits_direct[i], boost::test_tools::tolerance(1e-5f));
}

// Wait-free backprop: a worker pushes a layer's gradients as soon as backward() says they are
// complete. They must be final then: what was read at the call is what backward() ends with.
BOOST_AUTO_TEST_CASE(backward_reports_each_layers_gradients_once_they_are_final) {
  auto spec = layers_model({6, 6, 2}, {"conv 3x3x3 relu", "maxpool 2", "dropout 0.5", "dense 4 elu", "dense 3"});
  auto images = random_values(batch * spec.input.size(), 5, -1.0f, 1.0f);
  auto net = std::move(*actorps::network::make(*be, spec, batch, 77));
  BOOST_REQUIRE(!net->set_parameters(initial_values(spec, {}, 3)));
  net->load_batch(images.data(), labels.data(), batch);
  net->forward(true);
  std::vector<size_t> calls;
  values seen(spec.variables().size());
  net->backward([&](size_t first) {
    calls.push_back(first);
    for (size_t v = first; v < seen.size(); ++v)
      if (seen[v].empty()) {
        seen[v].resize(net->gradients()[v].size());
        BOOST_REQUIRE(!net->download_gradient(v, 0, seen[v].data(), seen[v].size()));
      }
  });
  BOOST_TEST((calls == std::vector<size_t>{4, 2, 0})); // dense 3, dense 4, conv: last layer first
  values final;
  BOOST_REQUIRE(!net->get_gradients(final));
  BOOST_TEST((seen == final));
}

BOOST_AUTO_TEST_CASE(dropout_matches_finite_differences_with_its_mask) {
  check_gradients(layers_model({1, 1, 6}, {"dense 8 relu", "dropout 0.5", "dense 3"}), true, "dropout");
}

BOOST_AUTO_TEST_CASE(dropout_applies_only_in_training_and_draws_a_new_mask_per_pass) {
  auto spec = layers_model({1, 1, 4}, {"dropout 0.5", "dense 3"});
  auto net = std::move(*actorps::network::make(*be, spec, batch, 5));
  auto params = initial_values(spec, init_options{}, 1);
  BOOST_REQUIRE(!net->set_parameters(params));
  auto images = random_values(batch * 4, 2, 0.5f, 1.0f);
  auto loss_of = [&](bool training) {
    net->load_batch(images.data(), labels.data(), batch);
    net->forward(training);
    net->score();
    return net->take_metrics()->loss;
  };
  double eval1 = loss_of(false), eval2 = loss_of(false);
  BOOST_TEST(eval1 == eval2);
  double train1 = loss_of(true), train2 = loss_of(true);
  BOOST_TEST(train1 != eval1);
  BOOST_TEST(train1 != train2);
  // the same seed gives the same masks
  auto again = std::move(*actorps::network::make(*be, spec, batch, 5));
  BOOST_REQUIRE(!again->set_parameters(params));
  again->load_batch(images.data(), labels.data(), batch);
  again->forward(true);
  again->score();
  BOOST_TEST(again->take_metrics()->loss == train1);
}

BOOST_AUTO_TEST_CASE(loss_gradient_matches_finite_differences) {
  const int rows = 3, cols = 4;
  auto zs = random_values(rows * cols, 5, -2.0f, 2.0f);
  std::vector<float> ls = {3, 0, 1};
  auto z = std::move(*be->allocate(zs.size())), l = std::move(*be->allocate(3)),
       g = std::move(*be->allocate(zs.size())), loss = std::move(*be->allocate(1));
  be->upload(ls.data(), 3, l.data());
  auto eval = [&](const std::vector<float>& v) {
    be->upload(v.data(), v.size(), z.data());
    be->softmax_xent(z.as_matrix(rows, cols), l.data(), g.as_matrix(rows, cols), loss.data());
    float out;
    BOOST_REQUIRE(!be->download(loss.data(), 1, &out));
    return double{out};
  };
  eval(zs);
  std::vector<float> grad(zs.size());
  BOOST_REQUIRE(!be->download(g.data(), grad.size(), grad.data()));
  for (size_t i = 0; i < zs.size(); ++i) {
    auto plus = zs, minus = zs;
    plus[i] += 1e-3f;
    minus[i] -= 1e-3f;
    double numeric = (eval(plus) - eval(minus)) / 2e-3;
    BOOST_TEST(std::fabs(grad[i] - numeric) < 2e-4, "logit " << i);
  }
}

BOOST_AUTO_TEST_CASE(metrics_average_over_batches_and_reset) {
  auto spec = layers_model({1, 1, 6}, {"dense 5 elu", "dense 3"});
  auto images = random_values(batch * 6, 21, 0.0f, 1.0f);
  auto net = std::move(*actorps::network::make(*be, spec, batch));
  BOOST_REQUIRE(!net->set_parameters(initial_values(spec, init_options{}, 1)));
  net->load_batch(images.data(), labels.data(), 2);
  net->forward(false);
  net->score();
  auto first = *net->take_metrics();
  BOOST_TEST(first.rows == 2);
  net->load_batch(images.data(), labels.data(), 2);
  net->forward(false);
  net->score();
  net->forward(false);
  net->score();
  auto twice = *net->take_metrics();
  BOOST_TEST(twice.rows == 4);
  BOOST_TEST(twice.loss == first.loss, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(twice.accuracy == first.accuracy);
  BOOST_TEST(net->take_metrics()->rows == 0);
}

BOOST_AUTO_TEST_CASE(wrong_parameter_sizes_are_rejected_and_leave_parameters) {
  auto spec = layers_model({2, 2, 1}, {"conv 2x2x3 relu", "dense 5 relu", "dense 3"});
  auto net = std::move(*actorps::network::make(*be, spec, batch));
  auto good = initial_values(spec, init_options{}, 1);
  BOOST_REQUIRE(!net->set_parameters(good));
  auto bad = good;
  bad[2].pop_back();
  auto err = net->set_parameters(bad);
  BOOST_TEST(err == actorps::errc::shape_mismatch);
  BOOST_TEST(describe(err) == "shape_mismatch: dense0/weights: expected 60 values, got 59");
  values now;
  BOOST_REQUIRE(!net->get_parameters(now));
  BOOST_TEST((now == good));
}

BOOST_AUTO_TEST_CASE(an_invalid_model_is_refused_naming_the_layer) {
  auto spec = layers_model({4, 4, 1}, {"conv 3x3x2 valid relu", "dense 3"});
  spec.layers[0].kernel = 5;
  auto net = actorps::network::make(*be, spec, batch);
  BOOST_REQUIRE(!net);
  BOOST_TEST(describe(net.error()).find("layer 0 (conv 5x5x2 valid relu)") != std::string::npos,
             describe(net.error()));
}

BOOST_AUTO_TEST_CASE(evaluation_batches_shrink_for_large_activations) {
  BOOST_TEST(evaluation_batch(layers_model({28, 28, 1}, {"dense 160 elu", "dense 10"})) == 1000);
  int cnn = evaluation_batch(layers_model({28, 28, 1}, {"conv 3x3x32 relu", "maxpool 2", "dense 10"}));
  BOOST_TEST(cnn < 1000);
  BOOST_TEST(cnn * 28 * 28 * 32 <= (1 << 24));
}

// A network holds every layer's activations at once: the budget (64 MiB) is for all of them, a
// residual block's inner layers included, not for the widest alone.
BOOST_AUTO_TEST_CASE(evaluation_batches_budget_every_layer_at_once) {
  const std::vector<std::string> one{"conv 3x3x32 relu", "dense 10"};
  std::vector<std::string> deep(8, "conv 3x3x32 relu");
  deep.push_back("dense 10");
  const int shallow = evaluation_batch(layers_model({28, 28, 1}, one));
  const int stacked = evaluation_batch(layers_model({28, 28, 1}, deep));
  BOOST_TEST(stacked < shallow);
  BOOST_TEST(static_cast<size_t>(stacked) * 8 * 28 * 28 * 32 <= (size_t{1} << 24));
  const int block = evaluation_batch(layers_model({28, 28, 1}, {"conv 3x3x16 relu", "residual [conv 3x3x16, batchnorm relu, conv 3x3x16] relu", "dense 10"}));
  BOOST_TEST(static_cast<size_t>(block) * 5 * 28 * 28 * 16 <= (size_t{1} << 24)); // the block's three inner outputs and its own
  BOOST_TEST(evaluation_batch(layers_model({28, 28, 1}, deep)) >= 50); // (never below a training batch)
}

// The evaluator's network of the deepest preset stays within a few times the activations'
// budget (it held 2.4 GB when the batch was sized by the widest layer alone).
BOOST_AUTO_TEST_CASE(the_resnet20_evaluator_fits_a_few_hundred_mib) {
  const model_preset* p = find_preset("resnet20");
  BOOST_REQUIRE(p != nullptr);
  auto spec = layers_model({28, 28, 1}, p->layers);
  auto cpu = make_cpu_backend(1);
  auto net = actorps::network::make(*cpu, spec, evaluation_batch(spec));
  BOOST_REQUIRE(net);
  BOOST_TEST(cpu->memory().in_use < (size_t{256} << 20), cpu->memory().in_use);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(network)

// An embedding table's gradient holds the batch's rows alone, in the order the ids first name
// them (sparse_rows), and a range of the table's gradient is refused.
BOOST_AUTO_TEST_CASE(an_embedding_gradient_holds_the_touched_rows_in_order) {
  auto be = make_cpu_backend(1);
  auto spec = layers_model({1, 3, 1}, {"embedding 4 2 sum", "dense 2"}); // a table of 16 rows
  auto net = actorps::network::make(*be, spec, 2);
  BOOST_REQUIRE(net);
  std::vector<std::vector<float>> values;
  BOOST_REQUIRE(!(*net)->get_parameters(values));
  for (size_t k = 0; k < values.size(); ++k)
    values[k] = random_values(values[k].size(), static_cast<uint32_t>(3 + k));
  BOOST_REQUIRE(!(*net)->set_parameters(values));
  // example 0: ids 5, 21 (row 5 again), 2; example 1: id 9, then empty slots
  std::vector<float> slots{encode_token(5), encode_token(21), encode_token(2), encode_token(9), 0.0f, 0.0f};
  std::vector<float> labels{0, 1};
  (*net)->load_batch(slots.data(), labels.data(), 2);
  (*net)->forward(true);
  (*net)->backward();
  const auto* rows = (*net)->sparse_rows(0);
  BOOST_REQUIRE(rows);
  BOOST_TEST((*rows == std::vector<size_t>{5, 2, 9}));
  BOOST_TEST(!(*net)->sparse_rows(1));
  std::vector<std::vector<float>> grads;
  BOOST_REQUIRE(!(*net)->get_gradients(grads));
  // sum: a row's gradient is the output gradient of each example naming it, once per naming:
  // row 5 (named twice by example 0) has twice row 2's (named once by example 0)
  for (int d = 0; d < 2; ++d) {
    BOOST_TEST(grads[0][0 * 2 + d] != 0.0f);
    BOOST_TEST(grads[0][0 * 2 + d] == 2.0f * grads[0][1 * 2 + d]);
  }
  BOOST_TEST((grads[0][4] != 0.0f || grads[0][5] != 0.0f)); // row 9: example 1's
  std::vector<float> out(2);
  BOOST_TEST((*net)->download_gradient(0, 0, out.data(), 2) == errc::invalid_argument);
}

namespace {

// Two networks of spec with the same random parameters (seeded from `seed`); `start` gets them.
std::pair<std::unique_ptr<actorps::network>, std::unique_ptr<actorps::network>>
twin_networks(backend& be, const model_spec& spec, uint32_t seed, std::vector<std::vector<float>>& start) {
  auto a = std::move(*actorps::network::make(be, spec, 2));
  auto b = std::move(*actorps::network::make(be, spec, 2));
  BOOST_REQUIRE(!a->get_parameters(start));
  for (size_t k = 0; k < start.size(); ++k)
    start[k] = random_values(start[k].size(), static_cast<uint32_t>(seed + k));
  BOOST_REQUIRE(!a->set_parameters(start));
  BOOST_REQUIRE(!b->set_parameters(start));
  return {std::move(a), std::move(b)};
}

// One training step of net's loaded batch: its loss, and its table gradient's rows and values.
struct table_step {
  double loss = 0.0;
  std::vector<size_t> rows;
  std::vector<float> grad;
};

// Two examples of 3 id slots for a table of 16 rows: ids 5, 21 (row 5 again), 2; id 9, then
// empty slots; labels 0 and 1.
std::vector<float> two_examples() {
  return {encode_token(5), encode_token(21), encode_token(2), encode_token(9), 0.0f, 0.0f};
}
const std::vector<float> two_labels{0, 1};

// Twin networks (twin_networks) of `layers` over inputs of 3 id slots, and the two examples'
// batch they read.
struct twins_of_two_examples {
  twins_of_two_examples(std::vector<std::string> layers, uint32_t seed) : be(make_cpu_backend(1)) {
    std::tie(a, b) = twin_networks(*be, layers_model({1, 3, 1}, std::move(layers)), seed, start);
  }
  std::unique_ptr<backend> be;
  std::vector<std::vector<float>> start;
  std::unique_ptr<actorps::network> a, b;
  const std::vector<float> slots = two_examples();
  const std::vector<float>& labels = two_labels;
};

table_step train_once(actorps::network& net) {
  table_step out;
  net.forward(true);
  net.backward();
  auto m = net.take_metrics();
  BOOST_REQUIRE(m);
  out.loss = m->loss;
  BOOST_REQUIRE(!net.download_table_gradient(0, out.rows, out.grad));
  return out;
}

} // namespace

// A worker's local table read where it lies (take_table_rows) computes what the same rows
// uploaded compute, its gradient in place is the one downloaded, and a later read of the table
// gives the rows taken.
BOOST_AUTO_TEST_CASE(table_rows_taken_in_place_compute_as_uploaded_ones) {
  auto be = make_cpu_backend(1);
  auto spec = layers_model({1, 3, 1}, {"embedding 2 2 mean", "dense 2"}); // a local table of 4 rows
  std::vector<float> slots{encode_token(0), encode_token(1), encode_token(0), encode_token(2), 0.0f, 0.0f};
  std::vector<float> labels{0, 1};
  std::vector<std::vector<float>> start;
  auto [uploaded, taken] = twin_networks(*be, spec, 7, start);
  const auto rows = random_values(3 * 2, 40); // rows 0-2 (the batch's), row 3 left as it was
  BOOST_REQUIRE(!uploaded->upload_parameter(0, 0, rows.data(), rows.size()));
  BOOST_REQUIRE(!taken->take_table_rows(0, rows.data(), rows.size()));
  std::vector<float> grad_uploaded, grad_taken;
  std::vector<size_t> order_uploaded, order_taken;
  for (auto* net : {uploaded.get(), taken.get()}) {
    net->load_batch(slots.data(), labels.data(), 2);
    net->forward(true);
    net->backward();
  }
  BOOST_TEST(uploaded->take_metrics()->loss == taken->take_metrics()->loss);
  BOOST_REQUIRE(!uploaded->download_table_gradient(0, order_uploaded, grad_uploaded));
  const float* in_place = taken->table_gradient_in_place(0, order_taken);
  BOOST_REQUIRE(in_place);
  BOOST_TEST(order_taken == order_uploaded, boost::test_tools::per_element());
  BOOST_TEST(std::vector<float>(in_place, in_place + grad_uploaded.size()) == grad_uploaded,
             boost::test_tools::per_element());
  BOOST_TEST(taken->take_table_rows(0, rows.data(), 9 * 2) == errc::shape_mismatch); // (more than the table)
  std::vector<std::vector<float>> after;
  BOOST_REQUIRE(!taken->get_parameters(after));
  std::vector<float> table = rows;
  table.insert(table.end(), start[0].begin() + 6, start[0].end());
  BOOST_TEST(after[0] == table, boost::test_tools::per_element());
}

// A batch renumbered ahead (ids 0, 1, 2, ... in first-seen order) taken without a look computes
// the loss and table gradient the looked-at batch does, and its gradient holds rows 0 .. distinct - 1.
BOOST_AUTO_TEST_CASE(a_renumbered_batch_computes_as_one_looked_at) {
  auto be = make_cpu_backend(1);
  auto spec = layers_model({1, 4, 1}, {"embedding 3 2 mean", "dense 2"});
  // example 0: local rows 0, 1, 0; example 1: rows 2, 1, 3, then an empty slot
  std::vector<float> slots{encode_token(0), encode_token(1), encode_token(0), 0.0f,
                           encode_token(2), encode_token(1), encode_token(3), 0.0f};
  std::vector<float> labels{1, 0};
  std::vector<std::vector<float>> start;
  auto [looked, renumbered] = twin_networks(*be, spec, 11, start);
  looked->load_batch(slots.data(), labels.data(), 2);
  renumbered->load_renumbered_batch(slots.data(), labels.data(), 2, 4);
  const auto a = train_once(*looked), b = train_once(*renumbered);
  BOOST_TEST(a.loss == b.loss);
  BOOST_TEST(b.rows == std::vector<size_t>({0, 1, 2, 3}), boost::test_tools::per_element());
  BOOST_TEST(a.rows == b.rows, boost::test_tools::per_element());
  BOOST_TEST(a.grad == b.grad, boost::test_tools::per_element());
  // a batch with an id past the distinct rows it claims is looked at: its rows found, not assumed
  std::vector<float> past{encode_token(5), encode_token(2), 0.0f, 0.0f, encode_token(2), 0.0f, 0.0f, 0.0f};
  renumbered->load_renumbered_batch(past.data(), labels.data(), 2, 2);
  renumbered->forward(true);
  renumbered->backward();
  BOOST_TEST(*renumbered->sparse_rows(0) == std::vector<size_t>({5, 2}), boost::test_tools::per_element());
  // a batch loaded after it is looked at again
  std::vector<float> other{encode_token(5), 0.0f, 0.0f, 0.0f, encode_token(5), encode_token(6), 0.0f, 0.0f};
  renumbered->load_batch(other.data(), labels.data(), 2);
  renumbered->forward(true);
  renumbered->backward();
  BOOST_TEST(*renumbered->sparse_rows(0) == std::vector<size_t>({5, 6}), boost::test_tools::per_element());
}

// A batch whose rows and positions another touched_rows of the table found (the input
// pipeline's thread, ahead of the step) computes the loss, table rows and gradient the batch
// looked at here does; one without positions is looked at.
BOOST_AUTO_TEST_CASE(a_batch_collected_ahead_computes_as_one_looked_at) {
  twins_of_two_examples twins{{"embedding 4 2 sum", "dense 2"}, 9};
  auto [looked, collected, slots, labels] = std::tie(twins.a, twins.b, twins.slots, twins.labels);
  touched_rows ahead{collected->embedding_table_rows(), 2 * 3};
  BOOST_TEST(collected->embedding_table_rows() == 16u);
  const auto& touched = ahead.collect(slots.data(), 2, 3);
  const std::vector<uint32_t> rows(touched.begin(), touched.end());
  std::vector<float> positions;
  ahead.give_positions(positions);
  looked->load_batch(slots.data(), labels.data(), 2);
  collected->load_collected_batch(slots.data(), labels.data(), 2, rows, positions);
  const auto a = train_once(*looked), b = train_once(*collected);
  BOOST_TEST(a.loss == b.loss);
  BOOST_TEST(b.rows == std::vector<size_t>({5, 2, 9}), boost::test_tools::per_element());
  BOOST_TEST(a.rows == b.rows, boost::test_tools::per_element());
  BOOST_TEST(a.grad == b.grad, boost::test_tools::per_element());
  std::vector<float> none; // (no positions: the batch is looked at)
  collected->load_collected_batch(slots.data(), labels.data(), 2, {}, none);
  BOOST_TEST(*collected->sparse_rows(0) == std::vector<size_t>({5, 2, 9}), boost::test_tools::per_element());
}

// An evaluation batch (load_eval_batch: the forward reads the rows by id) scores what the same
// batch loaded for training scores, lists no rows, and a backward after it moves none; a
// training batch after it lists its rows again.
BOOST_AUTO_TEST_CASE(an_evaluation_batch_scores_as_a_training_one_and_lists_no_rows) {
  twins_of_two_examples twins{{"embedding 4 2 mean", "dense 2"}, 5};
  auto [trained, evaluated, slots, labels] = std::tie(twins.a, twins.b, twins.slots, twins.labels);
  trained->load_batch(slots.data(), labels.data(), 2);
  evaluated->load_eval_batch(slots.data(), labels.data(), 2);
  std::vector<float> logits_trained, logits_evaluated;
  for (auto* net : {trained.get(), evaluated.get()}) {
    net->forward(false);
    net->score();
  }
  BOOST_REQUIRE(!trained->download_logits(logits_trained));
  BOOST_REQUIRE(!evaluated->download_logits(logits_evaluated));
  BOOST_TEST(logits_evaluated == logits_trained, boost::test_tools::per_element());
  BOOST_TEST(evaluated->take_metrics()->accuracy == trained->take_metrics()->accuracy);
  BOOST_TEST(evaluated->sparse_rows(0)->empty());
  evaluated->forward(true);
  evaluated->backward();
  BOOST_TEST(evaluated->sparse_rows(0)->empty());
  evaluated->load_batch(slots.data(), labels.data(), 2);
  BOOST_TEST(*evaluated->sparse_rows(0) == std::vector<size_t>({5, 2, 9}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
