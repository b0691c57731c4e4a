// Reads CIFAR-10's binary format: records of one label byte and 3,072 pixel bytes (three 32x32
// channel planes, red, green, blue), as in data_batch_1.bin ... data_batch_5.bin and test_batch.bin.
#pragma once

#include "data/dataset.hpp"

#include <caf/expected.hpp>

#include <string>
#include <vector>

namespace actorps {

/// The files of a CIFAR-10 directory.
constexpr const char* cifar10_train_files[] = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                               "data_batch_4.bin", "data_batch_5.bin"};
constexpr const char* cifar10_test_file = "test_batch.bin";

/// Reads and concatenates the given files into one data set of 32x32x3 NHWC images (pixels
/// scaled to [0, 1]). Errors name the file: missing or unreadable, a size that is not a whole
/// (non-zero) number of 3,073-byte records, a label above 9 (with its record number).
caf::expected<dataset> read_cifar10(const std::vector<std::string>& paths);

/// Loads dir's five training batches and its test batch; the first validation_size training
/// examples become the validation set (0: the default size).
caf::expected<data_splits> load_cifar10_dir(const std::string& dir, int validation_size = 0);

} // namespace actorps
