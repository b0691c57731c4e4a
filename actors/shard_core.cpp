// The shard's store behind its lock, with its counters, metrics and log lines.
#include "actors/shard_core.hpp"

#include "control/slicing.hpp"
#include "common/log.hpp"

namespace actorps {

shard_core::shard_core(uint32_t index, std::shared_ptr<telemetry> observed, time_point now)
  : index_(index), tag_(cat("shard ", index)), observed_(std::move(observed)), store_(index), pushes_(0, now) {
}

template <class T>
caf::expected<T> shard_core::counted(caf::expected<T> x, const char* what) {
  if (!x) {
    ++rejected_;
    log_line(tag_, cat("rejected ", what, ": ", describe(x.error())));
  }
  return x;
}

caf::expected<setup_reply> shard_core::init(const shard_setup& setup) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (store_.initialized()) {
    log_line(tag_, cat("already initialised at version ", store_.version(), "; keeping its values"));
    return setup_reply{true, store_.version()};
  }
  if (setup.shard != index_)
    return counted<setup_reply>(caf::make_error(errc::invalid_argument,
                                                cat("setup for shard ", setup.shard, " sent to shard ", index_)),
                                "setup");
  if (auto err = store_.init(setup))
    return counted<setup_reply>(std::move(err), "setup");
  if (!setup.pieces) // (restored in pieces: said once they are in)
    log_line(tag_, store_.describe());
  return setup_reply{false, store_.version()};
}

caf::expected<setup_reply> shard_core::fill(const setup_piece& piece) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (auto err = store_.fill(piece))
    return counted<setup_reply>(std::move(err), "restore piece");
  if (piece.last)
    log_line(tag_, cat("restored in pieces: ", store_.describe()));
  return setup_reply{false, store_.version()};
}

namespace {

// Payload bytes of views' values, at the precision each is sent at.
uint64_t view_bytes(const std::vector<store_view>* views) {
  uint64_t n = 0;
  for (size_t i = 0; views && i < views->size(); ++i)
    n += (*views)[i].floats * bytes_per_value((*views)[i].precision);
  return n;
}

} // namespace

caf::expected<pull_reply> shard_core::read(const pull_request& req, std::vector<store_view>* in_place) {
  auto reply = store_.pull(req, in_place);
  if (reply && observed_)
    observed_->metrics().add("actorps_shard_sent_bytes_total",
                             static_cast<double>(payload_bytes(reply->slices) + view_bytes(in_place)));
  return counted(std::move(reply), "pull");
}

caf::expected<push_reply> shard_core::apply(const push_request& req, time_point now, std::vector<store_view>* in_place,
                                            const gradient_spans* at) {
  auto reply = store_.push(req, in_place, at);
  if (reply && req.worker != chief_worker_id) // (in-graph pushes come from the chief)
    pushes_.note(req.worker, now);
  if (reply && observed_) {
    auto& m = observed_->metrics();
    m.add("actorps_shard_updates_total", 1);
    uint64_t received = payload_bytes(req.grads);
    for (size_t i = 0; at && i < at->size(); ++i) // (gradients read in place, at their slice's precision)
      received += (*at)[i].size * bytes_per_value(req.grads[i].data.precision);
    m.add("actorps_shard_received_bytes_total", static_cast<double>(received));
    m.add("actorps_shard_sent_bytes_total", static_cast<double>(payload_bytes(reply->values) + view_bytes(in_place)));
    m.set("actorps_shard_version", static_cast<double>(reply->version));
  }
  return counted(std::move(reply), "push");
}

caf::expected<pull_reply> shard_core::pull(const pull_request& req) {
  std::lock_guard<std::mutex> guard{mtx_};
  return read(req, nullptr);
}

caf::expected<push_reply> shard_core::push(const push_request& req, time_point now) {
  std::lock_guard<std::mutex> guard{mtx_};
  return apply(req, now, nullptr);
}

template <class Reply, class Answer>
caf::error shard_core::in_place(Answer answer, const in_place_sender<Reply>& send) {
  std::lock_guard<std::mutex> guard{mtx_};
  std::vector<store_view> views;
  caf::expected<Reply> reply = answer(&views);
  if (!reply)
    return std::move(reply.error());
  send(*reply, views);
  return caf::none;
}

caf::error shard_core::pull_in_place(const pull_request& req, const in_place_sender<pull_reply>& send) {
  return in_place<pull_reply>([&](std::vector<store_view>* views) { return read(req, views); }, send);
}

caf::error shard_core::check_reads(const push_request& req) {
  std::lock_guard<std::mutex> guard{mtx_};
  return store_.check_reads(req);
}

caf::error shard_core::push_in_place(const push_request& req, time_point now, const in_place_sender<push_reply>& send,
                                     const gradient_spans* at) {
  return in_place<push_reply>([&](std::vector<store_view>* views) { return apply(req, now, views, at); }, send);
}

shard_stats shard_core::stats(time_point now) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto out = store_.stats();
  out.push_age_ms = pushes_.ages_ms(now);
  return out;
}

caf::expected<shard_snapshot> shard_core::snapshot() {
  std::lock_guard<std::mutex> guard{mtx_};
  return store_.snapshot();
}

caf::expected<snapshot_piece> shard_core::hold(uint64_t id) {
  std::lock_guard<std::mutex> guard{mtx_};
  const size_t kept = store_.held_floats();
  auto out = store_.hold(id); // (releases the snapshot kept before: a save given up, or a lost chief's)
  if (out && kept > 0)
    log_line(tag_, cat("an earlier save's snapshot released by save ", id, "'s (it had kept ", kept * sizeof(float),
                       " bytes that pushes wrote during that save)"));
  return out;
}

caf::expected<snapshot_piece> shard_core::read_held(uint64_t id, uint32_t which, const slice_ref& range) {
  std::lock_guard<std::mutex> guard{mtx_};
  return store_.read_held(id, which, range);
}

void shard_core::drop_held(uint64_t id) {
  std::lock_guard<std::mutex> guard{mtx_};
  const size_t kept = store_.held_floats();
  store_.drop_held(id);
  if (kept > 0 && store_.held_floats() == 0)
    log_line(tag_, cat("save ", id, "'s snapshot released (it had kept ", kept * sizeof(float), " bytes that pushes wrote during the save)"));
}

bool shard_core::initialized() {
  std::lock_guard<std::mutex> guard{mtx_};
  return store_.initialized();
}

std::string shard_core::stopping_line() {
  std::lock_guard<std::mutex> guard{mtx_};
  return cat("stopping at version ", store_.version(), " (", rejected_, " rejected messages)");
}

void shard_directory::set(const std::string& scope, entry e) {
  std::lock_guard<std::mutex> guard{mtx_};
  scopes_[scope] = std::move(e);
}

void shard_directory::erase(const std::string& scope) {
  std::lock_guard<std::mutex> guard{mtx_};
  scopes_.erase(scope);
}

shard_directory::entry shard_directory::find(const std::string& scope) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto it = scopes_.find(scope);
  return it == scopes_.end() ? entry{} : it->second;
}

} // namespace actorps
