// One TensorBoard event file: <dir>/events.out.tfevents.<seconds>.<host>.<pid>, a TFRecord
// stream (length, masked CRC-32C of the length, the serialised Event, its masked CRC-32C) that
// starts with the file-version record. Every record goes to the kernel in one write, so a
// killed process leaves whole records (a live TensorBoard sees them at once); a restarted node
// writes a new file beside the old. Thread-safe.
#pragma once

#include <caf/expected.hpp>

#include <mutex>
#include <string>

namespace actorps {

class event_file {
public:
  /// Creates dir (and parents) and a new event file in it. Errors: file_error naming the path.
  static caf::expected<event_file> create(const std::string& dir);

  event_file(event_file&& other) noexcept;
  event_file& operator=(event_file&&) = delete;
  ~event_file();

  /// Appends one record holding `event` (a serialised Event). After a failed write (a full disk)
  /// the file is cut back to its whole records and takes no more: the error names the file, and
  /// the next calls return none. A file removed meanwhile (its folder deleted) is created again,
  /// with a file-version record, and the log says once that the events before are gone.
  caf::error append(const std::string& event);

  const std::string& path() const { return path_; }

  /// The TFRecord framing of one record.
  static std::string frame(const std::string& data);

private:
  event_file(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  caf::error reopen(); // REQUIRES: mtx_ held
  std::string path_;
  int fd_ = -1;
  size_t size_ = 0; ///< bytes of whole records written
  std::mutex mtx_;
};

} // namespace actorps
