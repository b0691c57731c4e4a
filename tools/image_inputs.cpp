// Content sniffing (PNG signature, JPEG SOI, gzip or IDX magic, whole CIFAR-10 records) and loading.
#include "tools/image_inputs.hpp"

#include "data/text_corpus.hpp"

#include "common/enum_names.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "data/cifar_reader.hpp"
#include "data/jpeg_reader.hpp"
#include "data/png_reader.hpp"

#include <filesystem>
#include <fstream>

namespace actorps {

namespace {

constexpr input_kind all_input_kinds[] = {input_kind::automatic, input_kind::png, input_kind::jpeg, input_kind::idx,
                                          input_kind::cifar10};

input_kind sniff(const std::string& path) {
  if (looks_like_png(path))
    return input_kind::png;
  if (looks_like_jpeg(path))
    return input_kind::jpeg;
  std::ifstream in{path, std::ios::binary};
  unsigned char head[4] = {};
  in.read(reinterpret_cast<char*>(head), 4);
  if (in.gcount() == 4 && ((head[0] == 0x1f && head[1] == 0x8b) || (head[0] == 0 && head[1] == 0 && head[2] == 0x08)))
    return input_kind::idx;
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > 0 && size % 3073 == 0)
    return input_kind::cifar10;
  return input_kind::automatic; // unrecognised
}

} // namespace

const char* to_string(input_kind k) {
  switch (k) {
    case input_kind::automatic: return "auto";
    case input_kind::png: return "png";
    case input_kind::jpeg: return "jpeg";
    case input_kind::idx: return "idx";
    case input_kind::cifar10: return "cifar10";
  }
  return "?";
}

std::optional<input_kind> parse_input_kind(const std::string& name) {
  return parse_by_name(name, all_input_kinds);
}

caf::expected<image_input> load_image_input(const std::string& path, input_kind kind, const image_shape& want,
                                            bool resize) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return caf::make_error(errc::file_error, cat(path, ": no such file"));
  if (kind == input_kind::automatic)
    kind = sniff(path);
  image_input out;
  caf::expected<dataset> loaded = caf::make_error(errc::corrupt_data, "");
  switch (kind) {
    case input_kind::automatic:
      return caf::make_error(errc::corrupt_data, cat(path, ": not a PNG or JPEG image, an IDX image file or a CIFAR-10 "
                                                     "binary file"));
    case input_kind::png:
    case input_kind::jpeg: loaded = read_image(path, want, resize); break;
    case input_kind::idx: loaded = load_idx_images(path); break;
    case input_kind::cifar10:
      loaded = read_cifar10({path});
      out.labelled = true;
      break;
  }
  if (!loaded)
    return std::move(loaded.error());
  if (!(loaded->shape == want))
    return caf::make_error(errc::shape_mismatch, cat(path, ": images are ", loaded->shape.text(), ", the model takes ",
                                                     want.text(), kind == input_kind::png || kind == input_kind::jpeg ? "" : " (only PNG and JPEG images are resized)"));
  out.images = std::move(*loaded);
  return out;
}

caf::expected<image_input> load_text_input(const std::string& path, const image_shape& want, bool bigrams) {
  image_input out;
  out.images.rows = 1;
  out.images.shape = want;
  out.images.cols = static_cast<int>(want.size());
  out.images.images.resize(want.size());
  out.images.labels.assign(1, 0.0f);
  text_options o;
  o.max_tokens = out.images.cols;
  o.bigrams = bigrams;
  if (auto err = encode_text_file(path, o, out.images.images.data()))
    return err;
  return out;
}

} // namespace actorps
