// What a checkpoint holds (docs/checkpoint_format.md): a manifest -- global step, placement,
// model, optimizer, hyperparameters, data position and a checksum per shard file -- and one file
// per shard with its variables and optimizer slots. Plain structs with Cereal serialize
// functions; no actor or wire types, so the format stands on its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace actorps {

/// Bumped on any change of the layout below. Readers take every version up to this one (format 1
/// lacks the input scaling, format 2 the partitioner, format 3 the elastic membership, format 4
/// the class names, format 5 the input crop and standardisation, format 6 the text tokens' kind)
/// and refuse others by name. Writers write this one.
constexpr uint32_t checkpoint_format_version = 7;

struct checkpoint_variable {
  std::string name;
  int32_t rows = 0;
  int32_t cols = 0;
  uint32_t shard = 0; ///< placement: the shard of its first part, whose file holds it whole
  template <class Archive>
  void serialize(Archive& ar) { ar(name, rows, cols, shard); }
};

inline bool operator==(const checkpoint_variable& x, const checkpoint_variable& y) {
  return x.name == y.name && x.rows == y.rows && x.cols == y.cols && x.shard == y.shard;
}

inline bool operator!=(const checkpoint_variable& x, const checkpoint_variable& y) {
  return !(x == y);
}

struct checkpoint_optimizer {
  std::string kind;
  float learning_rate = 0, momentum = 0, beta1 = 0, beta2 = 0, epsilon = 0, decay_rate = 1;
  int64_t decay_steps = 0;
  template <class Archive>
  void serialize(Archive& ar) { ar(kind, learning_rate, momentum, beta1, beta2, epsilon, decay_rate, decay_steps); }
};

/// One shard file as the manifest records it.
struct checkpoint_file {
  uint32_t shard = 0;
  std::string file;   ///< name inside the checkpoint directory
  uint64_t bytes = 0;
  uint32_t crc32 = 0; ///< zlib crc32 of the whole file
  template <class Archive>
  void serialize(Archive& ar) { ar(shard, file, bytes, crc32); }
};

struct checkpoint_manifest {
  uint32_t format = checkpoint_format_version;
  int64_t global_step = 0;
  int64_t examples = 0;          ///< training examples consumed: the data position
  double train_seconds = 0;
  double validation_accuracy = 0; ///< at the evaluation that triggered the save (best model)
  std::string model;              ///< model_spec::text(), e.g. "28x28x1: dense 160 elu, ..., dense 10"
  std::string placement;          ///< round-robin or balanced
  std::vector<checkpoint_variable> variables; ///< creation order
  checkpoint_optimizer optimizer;
  std::string mode;               ///< async, sync, ssp, model-parallel
  int32_t batch_size = 0;
  uint64_t seed = 0;
  uint32_t workers = 0;
  std::vector<checkpoint_file> files;
  // Format 2: how pixels were scaled for this model (empty: byte / 255 only), per channel.
  std::vector<float> input_mean;
  std::vector<float> input_stddev;
  // Format 3: cluster.partitioner ("none", "fixed:K", "max-bytes:B"); earlier formats had none.
  std::string partitioner = "none";
  // Format 4: the live worker ids of an elastic job at the save (a restarted chief waits for
  // these, joiners included); empty otherwise.
  std::vector<uint32_t> members;
  /// Format 4: an elastic job's data plan (epoch_ledger::save()): which examples of the open
  /// epochs were trained; empty otherwise.
  std::vector<int64_t> data_plan;
  /// Format 5: the classes' names by label (empty: unnamed).
  std::vector<std::string> class_names;
  /// Format 6: the central window the model takes (0: the whole image) of images of the source
  /// size, and whether each image is standardised (data.crop-size, data.standardize).
  int32_t input_crop = 0;
  int32_t input_source_height = 0;
  int32_t input_source_width = 0;
  bool input_standardize = false;
  /// Format 7: text inputs (data.format = text) hashed words and bigrams (data.bigrams), not
  /// words alone; true before.
  bool input_bigrams = true;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(format, global_step, examples, train_seconds, validation_accuracy, model, placement, variables, optimizer,
       mode, batch_size, seed, workers, files);
    if (format >= 2)
      ar(input_mean, input_stddev);
    if (format >= 3)
      ar(partitioner);
    if (format >= 4)
      ar(members, data_plan);
    if (format >= 5)
      ar(class_names);
    if (format >= 6)
      ar(input_crop, input_source_height, input_source_width, input_standardize);
    if (format >= 7)
      ar(input_bigrams);
  }
};

struct checkpoint_variable_state {
  uint32_t index = 0; ///< position in the manifest's variables
  std::vector<float> values;
  std::vector<float> slot0; ///< momentum accumulator or Adam's m (empty for sgd)
  std::vector<float> slot1; ///< Adam's v (empty otherwise)
  template <class Archive>
  void serialize(Archive& ar) { ar(index, values, slot0, slot1); }
};

/// Everything one shard needs to resume.
struct shard_checkpoint {
  uint32_t format = checkpoint_format_version;
  uint32_t shard = 0;
  uint64_t version = 0; ///< updates applied (the optimizer's update count)
  std::vector<checkpoint_variable_state> variables;
  template <class Archive>
  void serialize(Archive& ar) { ar(format, shard, version, variables); }
};

/// A whole checkpoint in memory.
struct checkpoint {
  checkpoint_manifest manifest;
  std::vector<shard_checkpoint> shards; ///< indexed by shard
};

} // namespace actorps
