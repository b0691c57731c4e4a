// What a cluster needs to train a model with an embedding table: the table lives on the ps
// nodes only, split over all of them, and each worker pulls and pushes the rows of its batch.
// The modes and options that move whole variables are refused by name.
#pragma once

#include "config/cluster_options.hpp"
#include "config/train_options.hpp"

#include <caf/error.hpp>

namespace actorps {

/// With an embedding layer in train.model: between-graph async, sync or ssp on one device per
/// worker, cluster.overlap-steps only in async with cluster.rows-with-push, without value or
/// gradient compression (top-k) or elastic membership. Errors (invalid_config) name the key.
/// Without an embedding: none.
caf::error check_table_cluster(const worker_settings& cluster, const train_settings& train);

} // namespace actorps
