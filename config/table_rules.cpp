// The cluster options an embedding model refuses (see table_rules.hpp).
#include "config/table_rules.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

namespace actorps {

caf::error check_table_cluster(const worker_settings& cluster, const train_settings& train) {
  const auto& layers = train.model.layers;
  if (layers.empty() || layers.front().kind != layer_kind::embedding)
    return caf::none;
  auto refuse = [&](const std::string& key, const std::string& why) {
    return caf::make_error(errc::invalid_config, cat(key, ": ", why, " (model.layers[0] \"", layers.front().text(),
                                                     "\" is an embedding table, pulled and pushed by rows)"));
  };
  if (cluster.in_graph())
    return refuse("cluster.replication = in-graph", "the chief would compute on the whole table");
  if (cluster.model_parallel())
    return refuse("train.mode = model-parallel", "slices split dense layers only");
  if (cluster.overlap_steps > 0 && (cluster.mode != train_mode::async || !cluster.rows_with_push))
    return refuse("cluster.overlap-steps", "a step computed ahead needs its rows asked back by an earlier push "
                                           "(train.mode = async with cluster.rows-with-push only)");
  if (cluster.wire.compression != sparsifier::none || cluster.wire.value_compression != sparsifier::none)
    return refuse(cluster.wire.compression != sparsifier::none ? "cluster.gradient-compression"
                                                               : "cluster.value-compression",
                  "top-k keeps a copy of every variable on the worker");
  if (cluster.elastic.on)
    return refuse("cluster.elastic", "elastic membership is not supported with a table yet");
  if (!train.device.devices.empty())
    return refuse("compute.devices", "towers split a batch whose rows are pulled as one");
  return caf::none;
}

} // namespace actorps
