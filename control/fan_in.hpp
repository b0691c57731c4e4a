// Fan-in of n answers to one continuation: the one helper behind every "ask all shards, then
// go on" of the actors. Plain C++; shared by the reply handlers of one actor (one thread).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace actorps {

/// Collects one T per slot; calls `done` once when every slot is filled, or `failed` once at the
/// first failure. Anything after either is ignored (a late or second answer changes nothing).
template <class T>
class fan_in {
public:
  using done_fn = std::function<void(std::vector<T>&)>;
  using failed_fn = std::function<void(std::string)>;

  /// REQUIRES: n > 0.
  static std::shared_ptr<fan_in> make(size_t n, done_fn done, failed_fn failed) {
    return std::shared_ptr<fan_in>(new fan_in(n, std::move(done), std::move(failed)));
  }

  /// Fills slot i.
  void put(size_t i, T x) {
    if (closed_)
      return;
    results_[i] = std::move(x);
    if (--remaining_ == 0) {
      closed_ = true;
      done_(results_);
    }
  }

  /// Ends the fan-in with `why` (only the first failure counts).
  void fail(std::string why) {
    if (closed_)
      return;
    closed_ = true;
    failed_(std::move(why));
  }

private:
  fan_in(size_t n, done_fn done, failed_fn failed)
    : results_(n), remaining_(n), done_(std::move(done)), failed_(std::move(failed)) {}

  std::vector<T> results_;
  size_t remaining_;
  bool closed_ = false;
  done_fn done_;
  failed_fn failed_;
};

} // namespace actorps
