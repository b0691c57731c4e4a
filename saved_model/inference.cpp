// Batched forward passes of a saved model on a compute backend.
#include "saved_model/inference.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "model/network.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace actorps {

caf::error check_fits(const saved_model& m, const dataset& data, const std::string& what, bool labelled) {
  const image_shape want = m.scaling.source_for(m.spec.input);
  if (!(data.shape == want))
    return caf::make_error(errc::shape_mismatch,
                           cat(what, ": images are ", data.shape.text(), ", the model takes ", want.text(),
                               want == m.spec.input ? "" : cat(" (its central ", m.spec.input.text(), " window)")));
  if (labelled)
    for (size_t i = 0; i < data.labels.size(); ++i)
      if (!(data.labels[i] >= 0.0f && data.labels[i] < static_cast<float>(m.spec.classes())))
        return caf::make_error(errc::shape_mismatch, cat(what, ": example ", i, " has label ", data.labels[i],
                                                         ", the model has ", m.spec.classes(), " classes"));
  return caf::none;
}

caf::expected<std::vector<float>> model_logits(const saved_model& m, const dataset& data, backend& be) {
  auto net = network::make(be, m.spec, std::max(1, std::min(evaluation_batch(m.spec), data.rows)));
  if (!net)
    return std::move(net.error());
  if (auto err = (*net)->set_parameters(m.values))
    return err;
  const int batch = (*net)->max_batch();
  const auto classes = static_cast<size_t>(m.spec.classes());
  const auto px = static_cast<size_t>(data.cols);
  std::vector<float> out(static_cast<size_t>(data.rows) * classes), part;
  for (int first = 0; first < data.rows; first += batch) {
    int rows = std::min(batch, data.rows - first);
    (*net)->load_eval_batch(data.images.data() + first * px, data.labels.data() + first, rows);
    (*net)->forward(false);
    if (auto err = (*net)->download_logits(part))
      return err;
    std::copy(part.begin(), part.end(), out.begin() + static_cast<std::ptrdiff_t>(first * classes));
  }
  return out;
}

std::vector<double> softmax(const float* logits, int classes) {
  std::vector<double> p(static_cast<size_t>(classes));
  double top = *std::max_element(logits, logits + classes);
  double sum = 0.0;
  for (int c = 0; c < classes; ++c)
    sum += p[c] = std::exp(static_cast<double>(logits[c]) - top);
  for (auto& x : p)
    x /= sum;
  return p;
}

std::vector<std::pair<int, double>> top_classes(const std::vector<double>& probabilities, int k) {
  std::vector<int> order(probabilities.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return probabilities[a] > probabilities[b]; });
  std::vector<std::pair<int, double>> out;
  for (int i = 0; i < std::min<int>(k, static_cast<int>(order.size())); ++i)
    out.emplace_back(order[i], probabilities[order[i]]);
  return out;
}

} // namespace actorps
