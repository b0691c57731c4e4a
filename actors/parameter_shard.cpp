// The ParameterShard actor: thin message handlers over parameter_store.
#include "actors/parameter_shard.hpp"

#include "control/parameter_store.hpp"
#include "control/silence_watch.hpp"
#include "control/slicing.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace actorps {

namespace {

struct shard_state {
  parameter_shard_config cfg;
  parameter_store store;
  uint64_t rejected = 0;
  silence_watch pushes{0, {}}; // per worker id, for the chief's stall report
  static inline const char* name = "parameter_shard";
};

using shard_pointer = parameter_shard_actor::stateful_pointer<shard_state>;

std::string tag(shard_pointer self) {
  return cat("shard ", self->state.cfg.index);
}

template <class T>
caf::result<T> answer(shard_pointer self, caf::expected<T> x, const char* what) {
  if (x)
    return std::move(*x);
  ++self->state.rejected;
  log_line(tag(self), cat("rejected ", what, ": ", describe(x.error())));
  return std::move(x.error());
}

parameter_shard_actor::behavior_type shard_behavior(shard_pointer self, parameter_shard_config cfg) {
  self->state.cfg = cfg;
  self->state.store = parameter_store{cfg.index};
  self->state.pushes = silence_watch{0, self->clock().now()};
  if (cfg.setup_timeout.count() > 0)
    self->delayed_send(self, cfg.setup_timeout, tick_atom_v);
  return {
    [=](init_atom, const shard_setup& setup) -> caf::result<setup_reply> {
      auto& st = self->state.store;
      if (st.initialized()) {
        log_line(tag(self), cat("already initialised at version ", st.version(), "; keeping its values"));
        return setup_reply{true, st.version()};
      }
      if (setup.shard != self->state.cfg.index)
        return answer<setup_reply>(self, caf::make_error(errc::invalid_argument,
                                                         cat("setup for shard ", setup.shard, " sent to shard ",
                                                             self->state.cfg.index)), "setup");
      if (auto err = st.init(setup))
        return answer<setup_reply>(self, std::move(err), "setup");
      log_line(tag(self), st.describe());
      return setup_reply{false, st.version()};
    },
    [=](pull_atom, const pull_request& req) -> caf::result<pull_reply> {
      auto reply = self->state.store.pull(req);
      if (reply && self->state.cfg.observed)
        self->state.cfg.observed->metrics().add("actorps_shard_sent_bytes_total", static_cast<double>(payload_bytes(reply->slices)));
      return answer(self, std::move(reply), "pull");
    },
    [=](push_atom, const push_request& req) -> caf::result<push_reply> {
      auto& st = self->state;
      auto reply = st.store.push(req);
      if (reply && req.worker != chief_worker_id) // (in-graph pushes come from the chief)
        st.pushes.note(req.worker, self->clock().now());
      if (reply && st.cfg.observed) {
        auto& m = st.cfg.observed->metrics();
        m.add("actorps_shard_updates_total", 1);
        m.add("actorps_shard_received_bytes_total", static_cast<double>(payload_bytes(req.grads)));
        m.add("actorps_shard_sent_bytes_total", static_cast<double>(payload_bytes(reply->values)));
        m.set("actorps_shard_version", static_cast<double>(reply->version));
      }
      return answer(self, std::move(reply), "push");
    },
    [=](stats_atom) -> shard_stats {
      auto stats = self->state.store.stats();
      stats.push_age_ms = self->state.pushes.ages_ms(self->clock().now());
      return stats;
    },
    [=](save_atom) -> caf::result<shard_snapshot> {
      auto snap = self->state.store.snapshot();
      if (!snap)
        return std::move(snap.error());
      return std::move(*snap);
    },
    [=](stop_atom) {
      log_line(tag(self), cat("stopping at version ", self->state.store.version(), " (",
                              self->state.rejected, " rejected messages)"));
      self->quit();
    },
    [=](tick_atom) {
      if (self->state.store.initialized())
        return;
      log_line(tag(self), "no setup from the chief within cluster.startup-timeout");
      self->quit(caf::make_error(errc::timeout, cat(tag(self), ": no setup from the chief within cluster.startup-timeout")));
    },
  };
}

} // namespace

parameter_shard_actor make_parameter_shard(caf::actor_system& sys, parameter_shard_config cfg) {
  return sys.spawn(shard_behavior, cfg);
}

} // namespace actorps
