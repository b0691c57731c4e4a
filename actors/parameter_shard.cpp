// The ParameterShard actor: thin message handlers over parameter_store.
#include "actors/parameter_shard.hpp"

#include "control/parameter_store.hpp"
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
      return answer(self, self->state.store.pull(req), "pull");
    },
    [=](push_atom, const push_request& req) -> caf::result<push_reply> {
      return answer(self, self->state.store.push(req), "push");
    },
    [=](stats_atom) -> shard_stats { return self->state.store.stats(); },
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
