// data.format = text: class folders of UTF-8 text files (train/<class>/, test/<class>/, optionally
// val/<class>/, as data/class_folders reads them) turned into bags of hashed token ids, as
// fastText and TF1's categorical_column_with_hash_bucket do: lower-cased words (runs of ASCII
// letters and digits, and of non-ASCII UTF-8 bytes) and, with bigrams, each pair of neighbouring
// words ("w1 w2"), each hashed with 64-bit FNV-1a to an id below 2^30 (the same id on every
// machine and process). An example keeps its first data.max-tokens ids (compute/token_ids.hpp).
#pragma once

#include "data/dataset.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace actorps {

struct text_options {
  int max_tokens = 400; ///< ids kept per example (words and bigrams, in text order)
  bool bigrams = true;
};

/// 64-bit FNV-1a of the bytes.
uint64_t fnv1a64(std::string_view bytes);

/// The token ids of one text, in order: word 1, word 2, "word1 word2", word 3, "word2 word3", ...
/// at most max_tokens of them.
std::vector<uint32_t> text_token_ids(std::string_view text, const text_options& options);

/// One example's row (options.max_tokens slots) from its ids.
void encode_tokens(const std::vector<uint32_t>& ids, int max_tokens, float* row);

/// The row (options.max_tokens slots) of the text file at path; errors name the file.
caf::error encode_text_file(const std::string& path, const text_options& options, float* row);

/// Loads root's class folders of text files (every regular file but hidden ones) into data sets
/// of 1 x max_tokens x 1 rows; without val/ the first validation_size training examples are the
/// validation set. Errors name the folder or file.
caf::expected<data_splits> load_text_corpus(const std::string& root, int validation_size, const text_options& options);

} // namespace actorps
