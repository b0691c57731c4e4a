// libjpeg with an error manager that returns (longjmp) instead of exiting, and warnings as errors.
#include "data/jpeg_reader.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "data/png_reader.hpp"

#include <csetjmp>
#include <cstdio>
#include <fstream>
#include <memory>

#include <jpeglib.h>

namespace actorps {

namespace {

struct jpeg_failure {
  jpeg_error_mgr mgr; // first: libjpeg casts its error manager pointer to this struct
  std::jmp_buf back;
  char message[JMSG_LENGTH_MAX] = {};
};

[[noreturn]] void on_error(j_common_ptr info) {
  auto* f = reinterpret_cast<jpeg_failure*>(info->err);
  (*info->err->format_message)(info, f->message);
  std::longjmp(f->back, 1);
}

void on_message(j_common_ptr info, int level) {
  if (level < 0) // a warning: corrupt data libjpeg would paper over
    on_error(info);
}

} // namespace

bool looks_like_jpeg(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  unsigned char head[3] = {};
  return in.read(reinterpret_cast<char*>(head), 3) && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF;
}

caf::expected<decoded_image> decode_jpeg(const std::string& path, int channels) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file{std::fopen(path.c_str(), "rb"), std::fclose};
  if (!file)
    return caf::make_error(errc::file_error, cat(path, ": cannot be read"));
  if (!looks_like_jpeg(path))
    return caf::make_error(errc::corrupt_data, cat(path, ": not a JPEG image (no SOI marker)"));
  jpeg_decompress_struct info;
  jpeg_failure failure;
  info.err = jpeg_std_error(&failure.mgr);
  failure.mgr.error_exit = on_error;
  failure.mgr.emit_message = on_message;
  decoded_image out;
  std::vector<unsigned char> row;
  if (setjmp(failure.back)) {
    jpeg_destroy_decompress(&info);
    return caf::make_error(errc::corrupt_data, cat(path, ": a corrupt JPEG (", failure.message, ")"));
  }
  jpeg_create_decompress(&info);
  jpeg_stdio_src(&info, file.get());
  jpeg_read_header(&info, TRUE);
  if (auto err = check_image_size(path, info.image_width, info.image_height)) {
    jpeg_destroy_decompress(&info);
    return err;
  }
  const bool grey = channels == 0 ? info.jpeg_color_space == JCS_GRAYSCALE : channels == 1;
  info.out_color_space = grey ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&info);
  out.shape = {static_cast<int>(info.output_height), static_cast<int>(info.output_width), grey ? 1 : 3};
  out.pixels.resize(out.shape.size());
  row.resize(static_cast<size_t>(info.output_width) * info.output_components);
  while (info.output_scanline < info.output_height) {
    unsigned char* rows[1] = {row.data()};
    const size_t y = info.output_scanline;
    jpeg_read_scanlines(&info, rows, 1);
    for (size_t i = 0; i < row.size(); ++i)
      out.pixels[y * row.size() + i] = static_cast<float>(row[i]) * (1.0f / 255.0f);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return out;
}

} // namespace actorps
