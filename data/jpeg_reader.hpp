// Reads JPEG images (Debian's libjpeg-turbo) for data.format = image-folder. Every warning
// libjpeg gives (a truncated file it would pad with grey, say) is an error: a data set is never
// trained on half an image.
#pragma once

#include "data/png_reader.hpp"

#include <caf/expected.hpp>

#include <string>

namespace actorps {

/// Decodes the JPEG at path; channels 1 or 3 converts to grey or RGB (libjpeg's colour
/// conversion), 0 keeps grey as grey and anything else as RGB. Errors name the path: a missing
/// file (file_error), not a JPEG or a corrupt or truncated one (corrupt_data, libjpeg's message).
caf::expected<decoded_image> decode_jpeg(const std::string& path, int channels = 0);

/// Returns whether the file at path starts with JPEG's SOI marker (FF D8 FF).
bool looks_like_jpeg(const std::string& path);

} // namespace actorps
