// A scope's variables on a ps node and what a shard counts about them, shared by the scope's
// ParameterShard actor and the node's tensor-stream sessions: a session serves its worker's pulls
// (and, where no aggregator decides, its pushes) from the values in place, with no actor hop
// between the bytes and the store. Ownership: the core belongs to no thread; every call takes
// its lock, so a push applies whole before any pull sees it. Errors are counted and logged here,
// whoever called.
#pragma once

#include "control/parameter_store.hpp"
#include "control/silence_watch.hpp"
#include "observe/telemetry.hpp"

#include <caf/actor_clock.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace actorps {

class shard_core {
public:
  using time_point = caf::actor_clock::time_point;

  shard_core(uint32_t index, std::shared_ptr<telemetry> observed, time_point now);

  /// (as parameter_store::init; an initialised core keeps its values and answers `true`)
  caf::expected<setup_reply> init(const shard_setup& setup);
  /// (as parameter_store::fill; the last piece logs what the shard holds)
  caf::expected<setup_reply> fill(const setup_piece& piece);
  caf::expected<pull_reply> pull(const pull_request& req);
  caf::expected<push_reply> push(const push_request& req, time_point now);

  /// send(reply, views): a reply whose dense values stay in the store (store_view), handed over
  /// under the core's lock, the only time the views may be read (a stream writes them out or
  /// copies them then).
  template <class Reply>
  using in_place_sender = std::function<void(Reply&, const std::vector<store_view>&)>;

  /// As pull and push, the reply's values in place: send is called with it before the call
  /// returns none; nothing is sent when it fails (the error). A push's gradients may lie outside
  /// its slices (`at`: parameter_store::push).
  caf::error pull_in_place(const pull_request& req, const in_place_sender<pull_reply>& send);
  /// (as parameter_store::check_reads)
  caf::error check_reads(const push_request& req);
  caf::error push_in_place(const push_request& req, time_point now, const in_place_sender<push_reply>& send,
                           const gradient_spans* at = nullptr);
  shard_stats stats(time_point now);
  caf::expected<shard_snapshot> snapshot();
  /// (as parameter_store::hold, read_held and drop_held: a save's snapshot kept by copy-on-write)
  caf::expected<snapshot_piece> hold(uint64_t id);
  caf::expected<snapshot_piece> read_held(uint64_t id, uint32_t which, const slice_ref& range);
  void drop_held(uint64_t id);
  bool initialized();
  /// The line a shard logs as it stops.
  std::string stopping_line();

  const std::string& tag() const { return tag_; }

private:
  template <class T>
  caf::expected<T> counted(caf::expected<T> x, const char* what);
  // pull and push with the lock held, counted and measured (views: see store_view).
  caf::expected<pull_reply> read(const pull_request& req, std::vector<store_view>* in_place);
  caf::expected<push_reply> apply(const push_request& req, time_point now, std::vector<store_view>* in_place,
                                  const gradient_spans* at = nullptr);
  // Under the lock: answer(&views) (read or apply), then send(reply, views) unless it failed.
  template <class Reply, class Answer>
  caf::error in_place(Answer answer, const in_place_sender<Reply>& send);

  std::mutex mtx_;
  uint32_t index_;
  std::string tag_;
  std::shared_ptr<telemetry> observed_;
  parameter_store store_;
  uint64_t rejected_ = 0;
  silence_watch pushes_; // per worker id, for the chief's stall report
};

/// The cores of a ps node's scopes, by scope name, for its stream sessions: `direct_pushes` when
/// the scope's pushes go straight to its shard (async and in-graph sessions; sync and ssp pushes
/// go to their aggregator, which decides). Thread-safe.
class shard_directory {
public:
  struct entry {
    std::shared_ptr<shard_core> core;
    bool direct_pushes = false;
  };

  void set(const std::string& scope, entry e);
  void erase(const std::string& scope);
  /// The scope's entry; core null when there is none.
  entry find(const std::string& scope);

private:
  std::mutex mtx_;
  std::map<std::string, entry> scopes_;
};

} // namespace actorps
