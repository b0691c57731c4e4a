// The ParameterShard actor: thin message handlers over its shard_core (the store behind its lock).
#include "actors/parameter_shard.hpp"
#include "actors/exception_log.hpp"

#include "actors/shard_core.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace actorps {

namespace {

struct shard_state {
  parameter_shard_config cfg;
  std::shared_ptr<shard_core> core;
  static inline const char* name = "parameter_shard";
};

using shard_pointer = parameter_shard_actor::stateful_pointer<shard_state>;

template <class T>
caf::result<T> answer(caf::expected<T> x) {
  if (x)
    return std::move(*x);
  return std::move(x.error());
}

parameter_shard_actor::behavior_type shard_behavior(shard_pointer self, parameter_shard_config cfg) {
  self->state.cfg = cfg;
  log_exceptions(self, cat("shard ", cfg.index));
  self->state.core = cfg.core ? cfg.core : std::make_shared<shard_core>(cfg.index, cfg.observed, self->clock().now());
  if (cfg.setup_timeout.count() > 0)
    self->delayed_send(self, cfg.setup_timeout, tick_atom_v);
  return {
    [=](init_atom, const shard_setup& setup) -> caf::result<setup_reply> {
      return answer(self->state.core->init(setup));
    },
    [=](init_atom, const setup_piece& piece) -> caf::result<setup_reply> {
      return answer(self->state.core->fill(piece));
    },
    [=](pull_atom, const pull_request& req) -> caf::result<pull_reply> {
      return answer(self->state.core->pull(req));
    },
    [=](push_atom, const push_request& req) -> caf::result<push_reply> {
      return answer(self->state.core->push(req, self->clock().now()));
    },
    [=](stats_atom) -> shard_stats { return self->state.core->stats(self->clock().now()); },
    [=](save_atom) -> caf::result<shard_snapshot> { return answer(self->state.core->snapshot()); },
    [=](save_atom, const snapshot_read& r) -> caf::result<snapshot_piece> {
      auto& core = *self->state.core;
      switch (r.op) {
        case snapshot_op::hold: return answer(core.hold(r.id)); // (releases a save given up, or a lost chief's)
        case snapshot_op::read: return answer(core.read_held(r.id, r.which, r.range));
        case snapshot_op::drop:
          core.drop_held(r.id);
          return snapshot_piece{};
      }
      return caf::make_error(errc::protocol_error, "an unknown snapshot_read op");
    },
    [=](stop_atom) {
      log_line(self->state.core->tag(), self->state.core->stopping_line());
      self->quit();
    },
    [=](tick_atom) {
      auto& core = *self->state.core;
      if (core.initialized())
        return;
      log_line(core.tag(), "no setup from the chief within cluster.startup-timeout");
      self->quit(caf::make_error(errc::timeout, cat(core.tag(), ": no setup from the chief within cluster.startup-timeout")));
    },
  };
}

} // namespace

parameter_shard_actor make_parameter_shard(caf::actor_system& sys, parameter_shard_config cfg) {
  return sys.spawn(shard_behavior, cfg);
}

} // namespace actorps
