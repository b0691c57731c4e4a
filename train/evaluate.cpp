// Batched evaluation straight from the data set's memory (no copies on the CPU backend path).
#include "train/evaluate.hpp"

#include <algorithm>

namespace actorps {

caf::expected<batch_metrics> evaluate(network& net, const dataset& data) {
  const int batch = net.max_batch();
  const size_t px = static_cast<size_t>(data.cols);
  for (int first = 0; first < data.rows; first += batch) {
    int rows = std::min(batch, data.rows - first);
    net.load_eval_batch(data.images.data() + first * px, data.labels.data() + first, rows);
    net.forward(false);
    net.score();
  }
  return net.take_metrics();
}

} // namespace actorps
