// The state of one ParameterShard as a plain class: its variables, their optimizer slots, and
// validated pull and push. Every check happens before any change: a rejected message leaves the
// store exactly as it was. Single-threaded (owned by the shard actor).
#pragma once

#include "actors/value_views.hpp"
#include "compute/optimizer_rules.hpp"
#include "messages/shard_protocol.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace actorps {

/// Converts the wire form of the optimizer settings; fails for an unknown kind.
caf::expected<optimizer_params> to_optimizer_params(const optimizer_config& cfg);

/// Converts optimizer settings to their wire form.
optimizer_config to_optimizer_config(const optimizer_params& p);

class parameter_store {
public:
  /// An uninitialised store for shard `shard` (named in error messages).
  explicit parameter_store(uint32_t shard = 0) : shard_(shard) {}

  /// Initialises from setup (once). Fails, leaving the store uninitialised, when the setup is
  /// inconsistent: a value for a variable another shard holds, a missing variable, wrong sizes,
  /// non-finite values or an unknown optimizer.
  caf::error init(const shard_setup& setup);

  bool initialized() const { return initialized_; }

  /// Returns the number of pushes applied so far.
  uint64_t version() const { return version_; }

  /// Returns the requested ranges of this shard's variables; with keep_view, remembers them as
  /// what the worker holds (value-compression).
  caf::expected<pull_reply> pull(const pull_request& req);

  /// Validates every slice (worker id, variable held here, range, finite values), then applies
  /// the optimizer to each slice and advances the version once. The reply's values (if asked
  /// for) travel at the request's precision, as top-k deltas with reply_topk > 0.
  caf::expected<push_reply> push(const push_request& req);

  /// Returns the shard's counters: version and the lag histogram of async pushes.
  shard_stats stats() const;

  /// Returns the values of the given ranges (validated like a pull from the chief).
  caf::expected<std::vector<variable_slice>> values_of(const std::vector<slice_ref>& ranges) const;

  /// Returns every variable and optimizer slot and the version, for a checkpoint.
  /// Fails with not_initialized before init.
  caf::expected<shard_snapshot> snapshot() const;

  /// Returns a one-line description of what this shard holds.
  std::string describe() const;

private:
  struct variable {
    uint32_t index = 0;
    std::string name;
    std::vector<float> values;
    std::vector<float> slot0;
    std::vector<float> slot1;
    optimizer_params optimizer; // the shard's, with this variable's weight decay
  };

  // Returns the variable with global index k if this shard holds it, else nullptr.
  const variable* find(uint32_t k) const;
  caf::error check_worker(uint32_t worker, bool chief_allowed) const;
  caf::error check_range(uint32_t var, uint32_t offset, size_t count) const;
  caf::expected<pull_reply> read(const pull_request& req) const;

  bool initialized_ = false;
  uint32_t shard_ = 0;
  uint32_t workers_ = 0;
  optimizer_params optimizer_;
  uint64_t version_ = 0;
  std::vector<uint64_t> lag_histogram_;
  std::vector<int> slot_of_; // global variable index -> position in vars_, or -1
  std::vector<variable> vars_;
  value_views views_; // what each worker holds, with value-compression
};

} // namespace actorps
