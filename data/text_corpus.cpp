// Text class folders into bags of hashed token ids (see text_corpus.hpp).
#include "data/text_corpus.hpp"

#include "common/errc.hpp"
#include "common/file_io.hpp"
#include "common/log.hpp"
#include "data/class_folders.hpp"
#include "compute/token_ids.hpp"

#include <algorithm>
#include <filesystem>

namespace actorps {

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

namespace {

bool word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

uint32_t id_of(std::string_view token) {
  return static_cast<uint32_t>(fnv1a64(token) & ((uint64_t{1} << token_id_bits) - 1));
}

} // namespace

std::vector<uint32_t> text_token_ids(std::string_view text, const text_options& options) {
  std::vector<uint32_t> out;
  const auto limit = static_cast<size_t>(std::max(0, options.max_tokens));
  std::string word, previous, pair;
  size_t i = 0;
  while (i < text.size() && out.size() < limit) {
    while (i < text.size() && !word_byte(static_cast<unsigned char>(text[i])))
      ++i;
    word.clear();
    while (i < text.size() && word_byte(static_cast<unsigned char>(text[i]))) {
      const auto c = static_cast<unsigned char>(text[i++]);
      word.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c));
    }
    if (word.empty())
      break;
    out.push_back(id_of(word));
    if (options.bigrams && !previous.empty() && out.size() < limit) {
      pair.assign(previous).append(" ").append(word);
      out.push_back(id_of(pair));
    }
    previous.swap(word);
  }
  return out;
}

void encode_tokens(const std::vector<uint32_t>& ids, int max_tokens, float* row) {
  const auto n = std::min(ids.size(), static_cast<size_t>(max_tokens));
  for (size_t t = 0; t < n; ++t)
    row[t] = encode_token(ids[t]);
  std::fill(row + n, row + max_tokens, 0.0f);
}

caf::error encode_text_file(const std::string& path, const text_options& options, float* row) {
  auto text = read_whole_file(path);
  if (!text)
    return std::move(text.error());
  encode_tokens(text_token_ids(*text, options), options.max_tokens, row);
  return caf::none;
}

namespace {

bool is_text_name(const std::string& path) {
  auto name = std::filesystem::path(path).filename().string();
  return !name.empty() && name[0] != '.';
}

caf::expected<dataset> read_set(const class_folder_set& set, const text_options& options) {
  dataset d;
  d.rows = static_cast<int>(set.files.size());
  d.shape = image_shape{1, options.max_tokens, 1};
  d.cols = options.max_tokens;
  d.images.resize(static_cast<size_t>(d.rows) * static_cast<size_t>(d.cols));
  d.labels.resize(static_cast<size_t>(d.rows));
  for (size_t i = 0; i < set.files.size(); ++i) {
    if (auto err = encode_text_file(set.files[i], options, d.images.data() + i * static_cast<size_t>(d.cols)))
      return err;
    d.labels[i] = static_cast<float>(set.labels[i]);
    d.max_label = std::max(d.max_label, set.labels[i]);
  }
  return d;
}

} // namespace

caf::expected<data_splits> load_text_corpus(const std::string& root, int validation_size, const text_options& options) {
  if (options.max_tokens < 1)
    return caf::make_error(errc::invalid_config, cat("data.max-tokens must be >= 1, got ", options.max_tokens));
  auto listed = list_class_folders(root, is_text_name, "text files");
  if (!listed)
    return std::move(listed.error());
  std::vector<dataset> sets;
  for (auto& set : listed->sets) {
    auto d = read_set(set, options);
    if (!d)
      return std::move(d.error());
    sets.push_back(std::move(*d));
  }
  auto out = splits_of(std::move(sets), validation_size, root);
  if (out) {
    out->class_names = listed->classes;
    out->token_ids = true;
    out->scaling.bigrams = options.bigrams;
  }
  return out;
}

} // namespace actorps
