// The state of one ParameterShard as a plain class: its variables, their optimizer slots, and
// validated pull and push. Every check happens before any change: a rejected message leaves the
// store exactly as it was. Single-threaded (owned by the shard actor).
#pragma once

#include "common/page_blocks.hpp"
#include "control/gradient_spans.hpp"
#include "control/shard_layout.hpp"
#include "control/snapshot_overlay.hpp"
#include "control/value_views.hpp"
#include "compute/optimizer_rules.hpp"
#include "messages/shard_protocol.hpp"

#include <caf/expected.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace actorps {

/// Converts the wire form of the optimizer settings; fails for an unknown kind.
caf::expected<optimizer_params> to_optimizer_params(const optimizer_config& cfg);

/// Converts optimizer settings to their wire form.
optimizer_config to_optimizer_config(const optimizer_params& p);

/// A reply's values left in the store (a pull or push with `in_place`): slice `slice` of the
/// reply is these `floats` values, which hold only until the store changes next (the shard core
/// reads them under its lock: shard_core::pull_in_place, push_in_place), to be rounded to
/// `precision` where they are copied (the slice names it too). A table's rows lie scattered:
/// row j's `cols` values at data + rows[j], gathered where they are copied.
struct store_view {
  size_t slice = 0;
  const float* data = nullptr;
  size_t floats = 0;
  wire_precision precision = wire_precision::fp32;
  std::vector<size_t> rows{}; // (none: the values lie contiguous at data)
  size_t cols = 0;

  /// Whether the values lie contiguous (as frames may be written from them).
  bool contiguous() const { return rows.empty(); }

  /// Copies the values into out (`floats` of them), gathered and rounded.
  void copy_to(float* out) const;
};

class parameter_store {
public:
  /// An uninitialised store for shard `shard` (named in error messages).
  explicit parameter_store(uint32_t shard = 0) : shard_(shard) {}

  /// Initialises from setup (once). Fails, leaving the store uninitialised, when the setup is
  /// inconsistent: a value for a part another shard holds, a missing part, wrong sizes,
  /// non-finite values or an unknown optimizer. Setup slices carry whole parts (a whole
  /// variable unless it is partitioned), at the part's offset in its variable.
  /// A setup with `pieces` leaves the store filling (values zero, slots at their start) until
  /// fill() takes the last piece; a store that is filling takes a setup again (a restarted chief
  /// begins the restore anew).
  caf::error init(const shard_setup& setup);

  /// A restore in pieces (setup_piece: messages/shard_protocol.hpp): writes the piece into its
  /// part's values or slot, each array in order from the part's start; the `last` piece checks
  /// that every part's values came (a slot either whole or not sent: it keeps its start) and
  /// makes the store ready. Fails, changing nothing, with not_initialized when not filling,
  /// unknown_variable, shape_mismatch (out of place or order, a part's values missing at the
  /// last) or non_finite.
  caf::error fill(const setup_piece& piece);

  /// Whether pulls and pushes are served (set up, and filled where the setup had pieces).
  bool initialized() const { return phase_ == phase::ready; }
  /// Whether a setup with pieces waits for more of them.
  bool filling() const { return phase_ == phase::filling; }

  /// Returns the number of pushes applied so far (a push in parts counts once, at its last).
  uint64_t version() const { return version_; }

  /// Returns the requested ranges of this shard's variables (a range with rows: those rows of a
  /// table, in their order); with keep_view, remembers them as what the worker holds
  /// (value-compression). Fails with unknown_scope for another scope. With in_place (and
  /// without keep_view), the values of ranges that name no rows stay in the store: their slices
  /// come back empty, each described in *in_place (rows are gathered, as without it).
  caf::expected<pull_reply> pull(const pull_request& req, std::vector<store_view>* in_place = nullptr);

  /// Checks a push's form and the rows it asks back as push() would (shard_layout's
  /// check_push_form and check_reads): for whoever reads them later in its place (the stream
  /// session of a push an aggregator decides).
  caf::error check_reads(const push_request& req) const;

  /// Validates every slice (worker id, variable held here, range or rows, finite values), then
  /// applies the optimizer to each slice (a row slice: to its rows alone, with their slots, as
  /// TF's sparse apply does) and advances the version once (at the last part of a push in
  /// parts: every part of a step is applied at the same step count). The reply's values (if
  /// asked for) travel at the request's precision, as top-k deltas with reply_topk > 0; the
  /// rows of req.reads (checked, with the gradients, before anything applies) follow them at fp32.
  /// With in_place, a reply at fp32 without top-k leaves its values in the store, as pull does.
  /// With `at`, slice i's gradient values are at[i] (a same-host worker's shared heap: the
  /// slices carry none), read where they lie.
  caf::expected<push_reply> push(const push_request& req, std::vector<store_view>* in_place = nullptr,
                                 const gradient_spans* at = nullptr);

  /// Returns the shard's counters: version and the lag histogram of async pushes.
  shard_stats stats() const;

  /// Returns the values of the given ranges (validated like a pull from the chief).
  caf::expected<std::vector<variable_slice>> values_of(const std::vector<slice_ref>& ranges) const;

  /// Returns every variable and optimizer slot and the version, for a checkpoint.
  /// Fails with not_initialized before init.
  caf::expected<shard_snapshot> snapshot() const;

  /// A snapshot kept for save `id` (snapshot_read's hold; any kept before is released) by
  /// copy-on-write (control/snapshot_overlay): its version and the ranges of every part's values
  /// and slots. Pushes go on; each block they write is kept as it was first. Fails with
  /// not_initialized before the setup.
  caf::expected<snapshot_piece> hold(uint64_t id);

  /// `range` of slot `which` (0: values, 1: slot0, 2: slot1) of save id's snapshot. Fails with
  /// protocol_error for a snapshot not kept (another save's, or released) or a slot above 2,
  /// with unknown_variable for a range that no part's array holds whole.
  caf::expected<snapshot_piece> read_held(uint64_t id, uint32_t which, const slice_ref& range) const;

  /// Releases save id's snapshot (not kept: nothing).
  void drop_held(uint64_t id);

  /// Floats kept for the snapshot beside the store.
  size_t held_floats() const { return held_.kept_floats(); }

  /// Returns a one-line description of what this shard holds.
  std::string describe() const;

private:
  // The floats of a part (an embedding table's part: on 2 MiB pages where the kernel gives them).
  using store_floats = std::vector<float, block_allocator<float>>;

  // A variable, or one part of it (cluster.partitioner), held here.
  struct part {
    uint32_t index = 0;  // the variable
    uint32_t offset = 0; // where the part starts in the whole variable
    std::string name;    // with "/part_J" when the variable is split
    uint32_t cols = 0;   // the variable's row length (a row slice's rows are cols values each)
    bool table = false;  // an embedding table's part (written by rows)
    store_floats values;
    store_floats slot0;
    store_floats slot1;
    optimizer_params optimizer; // the shard's, with this variable's weight decay
  };

  // A held snapshot keeps what a push is about to write in part p: n floats from each of `from`
  // (a range's start, or a table's rows), in its values and slots alike.
  void keep_held(size_t p, const std::vector<size_t>& from, size_t n);

  caf::error check_worker(uint32_t worker, bool chief_allowed) const;
  // Whether `worker` may push: a worker of the session, or in an in-graph session the chief alone.
  caf::error check_pusher(uint32_t worker) const;
  // Returns the position in parts_ of the part of variable var held here that contains
  // [offset, offset + count), or the error naming the ranges held.
  caf::expected<size_t> locate(uint32_t var, uint32_t offset, size_t count) const;
  // The same for a range that names rows (a table's row slice) or a range of floats.
  caf::expected<size_t> locate(const slice_ref& r) const;
  caf::error check_scope(const std::string& scope) const;
  // The part of each of req's ranges, or why worker req.worker may not read them.
  caf::expected<std::vector<size_t>> check_read(const pull_request& req) const;
  caf::expected<pull_reply> read(const pull_request& req, std::vector<store_view>* in_place = nullptr) const;
  // Appends the values of checked ranges to out, each from its part at[i] (a range with rows:
  // those rows); with in_place, each as a view of the store (its slice empty).
  void gather(const std::vector<slice_ref>& ranges, const std::vector<size_t>& at, std::vector<variable_slice>& out,
              std::vector<store_view>* in_place = nullptr) const;

  enum class phase { empty, filling, ready };
  phase phase_ = phase::empty;
  std::vector<std::array<size_t, 3>> filled_; // filling: per part, the values, slot0 and slot1 written
  uint32_t shard_ = 0;
  std::string scope_; // the plan's: pulls and pushes must name it
  uint32_t workers_ = 0;
  /// Who pushes: the workers (between-graph), or the chief alone (an in-graph session).
  enum class pushers { workers, chief };
  pushers pushers_ = pushers::workers;
  session_kind mode_ = session_kind::async; ///< sync: a step's update sets the version to >= step + 1
  optimizer_params optimizer_;
  uint64_t version_ = 0;
  std::vector<uint64_t> lag_histogram_;
  shard_layout layout_; // the ranges held here, in the order of parts_
  std::vector<part> parts_;
  value_views views_; // what each worker holds, with value-compression
  snapshot_overlay held_; // a save's snapshot, kept by copy-on-write
  uint64_t held_version_ = 0;
  static constexpr size_t held_block_floats = 16384; // a block of a variable that is not a table
};

} // namespace actorps
