// Loss and accuracy of a model on a whole data set, in batches.
#pragma once

#include "data/dataset.hpp"
#include "model/network.hpp"

#include <caf/expected.hpp>

namespace actorps {

/// Returns the mean loss and accuracy of net's current parameters on data.
/// REQUIRES: net's running metrics are empty (take_metrics() was called since the last step).
caf::expected<batch_metrics> evaluate(network& net, const dataset& data);

} // namespace actorps
