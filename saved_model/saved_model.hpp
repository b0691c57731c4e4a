// A trained model outside training: what it computes (the layer list over an input shape), how its
// inputs are scaled, and the values of its variables. Read from a checkpoint directory (the
// cluster's checkpoints and the models every run keeps under runs/<name>/model/) or from an .npz
// that actorps-export wrote; written as either. Format of the .npz: docs/export.md.
#pragma once

#include "checkpoint/checkpoint_format.hpp"
#include "data/dataset.hpp"
#include "model/init.hpp"
#include "model/model_spec.hpp"
#include "model/network.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace actorps {

struct saved_model {
  model_spec spec;
  input_scaling scaling;
  std::vector<std::vector<float>> values; ///< per variable, creation order
  int64_t step = 0;                       ///< the global step it was taken at
  double validation_accuracy = 0.0;       ///< at that step (0 when unknown)
  std::string source;                     ///< the path it was read from
  std::vector<std::string> class_names;   ///< by label; empty: unnamed

  /// The name of class c: its class name, else the number.
  std::string class_name(int c) const;
};

/// FNV-1a over the bytes of every variable in creation order, as 16 hex digits: equal digests,
/// equal weights (summary.json's weights_digest; what actorps-export and model.init-from log).
std::string weights_digest(const std::vector<std::vector<float>>& params);

/// The same digest fed a piece at a time: the values of every variable in creation order.
class weights_digester {
public:
  void add(const float* values, size_t n);
  std::string text() const;

private:
  uint64_t h_ = 1469598103934665603ULL; // FNV-1a's offset basis
};

/// The same digest of the values net holds, read a piece at a time (no copy of the model: the
/// chief's net may hold an embedding table of gigabytes).
caf::expected<std::string> weights_digest(network& net);

/// The name of the text entry of an exported .npz that describes the model (JSON).
constexpr const char* model_entry = "model.json";

/// The shape of each variable of spec (creation order) in an export: conv weights
/// [k_h, k_w, in, out] (TF's HWIO), dense weights [in, out], biases [units].
std::vector<std::vector<size_t>> export_shapes(const model_spec& spec);

/// Returns the model description written into an .npz: format, input shape, layers, classes,
/// scaling, variables with their shapes, step and validation accuracy (one line of JSON).
std::string model_json(const saved_model& m);

/// Builds a saved model from a verified checkpoint (variables gathered from every shard file).
/// Errors name path: a model text that does not parse, variables that are not the model's.
caf::expected<saved_model> from_checkpoint(const checkpoint& c, const std::string& path);

/// Writes s into a manifest's input fields, and reads them back.
void record_scaling(const input_scaling& s, checkpoint_manifest& m);
input_scaling recorded_scaling(const checkpoint_manifest& m);

/// The manifest of m as a kept model (placement "single"), m's values aside: what to_checkpoint
/// writes, for a model written a piece at a time (checkpoint/staged_model).
checkpoint_manifest saved_manifest(const saved_model& m);
/// The one shard file of a kept model holding values (creation order).
shard_checkpoint saved_shard(std::vector<std::vector<float>> values);

/// Returns m as a one-shard checkpoint (placement "single", no optimizer slots); its values are
/// moved there (pass a copy to keep them: std::move(m) saves a model's worth of memory).
checkpoint to_checkpoint(saved_model m);

/// Reads a model from path: a checkpoint directory (holding manifest.bin), a model directory
/// runs/<name>/model or a run directory runs/<name> (their best model), or an .npz written by
/// actorps-export. Every failure names the path.
caf::expected<saved_model> load_saved_model(const std::string& path);

/// How an export writes an embedding table: whole (parts 1: one array of its rows in order), or
/// as `parts` arrays "<name>/part_J" holding the rows a cluster of that many ps nodes holds (div:
/// consecutive ranges; mod: the rows r with r mod parts = J, in order), as TF saves a partitioned
/// variable; model.json then names the split (table_parts, table_partition).
struct table_export {
  uint32_t parts = 1;
  bool mod = false;
};

/// Writes m to path as an .npz (atomically: a temporary file renamed into place). Fails with
/// invalid_config when tables.parts exceeds a table's rows (or is 0).
caf::error export_npz(const saved_model& m, const std::string& path, const table_export& tables = {});

/// The values a run starts from: init.from's variables when set (loaded with load_saved_model and
/// matched to spec by name and shape; a missing, extra or differently shaped variable is an
/// invalid_config error naming it and both shapes), otherwise initial_values(spec, init, seed,
/// tables) (without tables an embedding table's value is empty: the ps nodes make it).
caf::expected<std::vector<std::vector<float>>> starting_values(const model_spec& spec, const init_options& init,
                                                               uint64_t seed, bool tables = true);

} // namespace actorps
