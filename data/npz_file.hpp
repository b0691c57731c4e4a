// NumPy's .npz container: a zip archive of .npy arrays, the format numpy.load reads with no extra
// package. Writes little-endian float32 arrays and unicode text entries, stored uncompressed;
// reads what it writes and what numpy.savez / savez_compressed write (float32 and float64,
// (u)int8 to (u)int64 and bool held as floats, unicode strings and arrays of them; stored or
// deflated; zip64 headers). Used by model exports (saved_model/) and data.format = npz (data/).
// Nothing here knows about models or data sets.
#pragma once

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace actorps {

/// One array of an .npz: float values with a shape, or a text (a 0-d unicode array).
struct npy_array {
  std::string name;           ///< the key numpy.load gives (the entry's name without ".npy")
  std::vector<size_t> shape;  ///< empty: a scalar (text entries are scalars)
  std::vector<float> values;  ///< row-major, prod(shape) values (numbers of any numeric dtype)
  std::string dtype;          ///< read: numpy's kind and width ("f4", "u1", "i8", "b1") or "U" (strings)
  std::vector<std::string> texts; ///< read, dtype "U": the strings, row-major (UTF-8)
  std::string text;           ///< UTF-8; a scalar string
  bool is_text = false;       ///< a scalar string
};

/// Returns a float array.
npy_array float_array(std::string name, std::vector<size_t> shape, std::vector<float> values);

/// Returns a text entry.
npy_array text_array(std::string name, std::string text);

/// Writes the arrays to path through a temporary file in the same directory, fsynced and renamed:
/// path is either the complete archive or untouched. Errors (file_error) name the path.
caf::error write_npz(const std::vector<npy_array>& arrays, const std::string& path);

/// Reads every array of the .npz at path. A missing file is a file_error; a truncated or foreign
/// file, a bad checksum, an unsupported dtype or compression is corrupt_data naming the path and
/// the entry.
caf::expected<std::vector<npy_array>> read_npz(const std::string& path);

/// Returns whether the file at path starts like a zip archive.
bool looks_like_npz(const std::string& path);

} // namespace actorps
