// The ResourceContainer actor: scope_table decisions, carried out on per-scope shards.
#include "actors/resource_container.hpp"
#include "actors/exception_log.hpp"

#include "actors/interfaces.hpp"
#include "actors/shard_core.hpp"
#include "control/fan_in.hpp"
#include "control/placement.hpp"
#include "control/scope_table.hpp"
#include "actors/stream_gateway.hpp"
#include "actors/sync_aggregator.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <map>
#include <optional>

namespace actorps {

namespace {

// The actors serving one scope.
struct scope_actors {
  parameter_shard_actor shard;
  parameter_shard_actor front; // the aggregator in sync/ssp sessions, else the shard
  caf::actor_addr chief;       // who set it up last
};

/// serving: as usual; leaving: SIGTERM came, the sessions' chiefs were asked to end their runs.
enum class container_phase { serving, leaving };

struct container_state {
  resource_container_config cfg;
  container_phase phase = container_phase::serving;
  caf::actor_clock::time_point leave_deadline; // leaving: quit by then
  std::string tag;
  scope_table table;
  std::map<std::string, scope_actors> scopes;
  std::optional<stream_gateway_actor> streams; // with cfg.stream_port
  std::shared_ptr<shard_directory> cores = std::make_shared<shard_directory>(); // the scopes' stores, for the streams
  static inline const char* name = "resource_container";
};

using container_pointer = resource_container_actor::stateful_pointer<container_state>;

// Spawns the shard of a new scope, with an aggregator in front for sync and ssp sessions (an
// in-graph session (session_kind::in_graph) has none: the chief pushes each step's average).
scope_actors spawn_scope(container_pointer self, const shard_setup& setup) {
  auto& cfg = self->state.cfg;
  scope_actors out;
  auto core = std::make_shared<shard_core>(cfg.index, cfg.observed, self->clock().now());
  out.shard = make_parameter_shard(self->system(), {cfg.index, std::chrono::milliseconds{0}, cfg.observed, core});
  out.front = out.shard;
  const auto kind = setup.session.mode;
  // the stream sessions serve its pulls from the store in place, and its pushes where no
  // aggregator decides (async, in-graph)
  self->state.cores->set(setup.plan.scope, {core, kind != session_kind::sync && kind != session_kind::ssp});
  if (kind == session_kind::sync || kind == session_kind::ssp) {
    sync_aggregator_config agg{cfg.index, kind == session_kind::sync ? train_mode::sync : train_mode::ssp, setup.workers, setup.session.replicas_to_aggregate,
                               setup.session.staleness, std::chrono::milliseconds{setup.session.step_timeout_ms},
                               cfg.request_timeout, setup.session.live_at_start,
                               setup.session.sum_over};
    out.front = make_sync_aggregator(self->system(), agg, out.shard);
  }
  self->monitor(out.front);
  // the scope's actors end with the container (local mode exits it; a ps node process ends)
  self->attach_functor([shard = out.shard.address(), front = out.front.address()] {
    caf::anon_send_exit(front, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
  });
  return out;
}

// The scope a chief-side message (save, stats) is for: the one whose chief sent it, or the only
// one there is; nullptr when that is not one scope.
const std::string* scope_of_sender(container_pointer self) {
  auto& st = self->state;
  auto sender = caf::actor_cast<caf::actor_addr>(self->current_sender());
  const std::string* found = nullptr;
  for (auto& [name, actors] : st.scopes)
    if (sender && actors.chief == sender) {
      if (found != nullptr)
        return nullptr;
      found = &name;
    }
  if (found == nullptr && st.scopes.size() == 1)
    found = &st.scopes.begin()->first;
  return found;
}

// Hands a pull or push on to the shard (or aggregator) of the scope it names.
template <class Reply, class Atom, class Request>
caf::result<Reply> to_named_scope(container_pointer self, Atom a, Request& req) {
  auto it = self->state.scopes.find(req.scope);
  if (it == self->state.scopes.end())
    return self->state.table.missing(req.scope, self->state.cfg.index);
  return self->delegate(it->second.front, a, std::move(req));
}

// Hands a save or stats request on to the scope of the chief that sent it.
template <class Reply, class... Ts>
caf::result<Reply> to_senders_scope(container_pointer self, Ts... xs) {
  auto* scope = scope_of_sender(self);
  if (scope == nullptr)
    return caf::make_error(errc::unknown_scope,
                           cat(self->state.tag, ": cannot tell which of ", self->state.scopes.size(),
                               " scopes this request is for (it did not come from exactly one scope's chief)"));
  return self->delegate(self->state.scopes[*scope].front, xs...);
}

scope_info info_of(container_pointer self, const std::string& name, uint64_t version) {
  auto& st = self->state;
  auto& plan = st.table.plan(name);
  return {name, to_string(st.table.phase(name)), static_cast<uint32_t>(parts_of(plan, st.cfg.index).size()),
          bytes_per_shard(plan).at(st.cfg.index), version};
}

// Stops a scope's actors and forgets them.
void stop_scope(container_pointer self, const std::string& name) {
  auto& st = self->state;
  auto it = st.scopes.find(name);
  if (it == st.scopes.end())
    return;
  self->demonitor(it->second.front.address());
  self->send(it->second.front, stop_atom_v); // an aggregator stops its shard too
  st.cores->erase(name);
  st.scopes.erase(it);
}

caf::result<setup_reply> on_setup(container_pointer self, shard_setup& setup) {
  auto& st = self->state;
  if (setup.shard != st.cfg.index)
    return caf::make_error(errc::invalid_argument, cat("setup for shard ", setup.shard, " sent to shard ", st.cfg.index));
  const std::string scope = setup.plan.scope;
  auto verdict = st.table.begin(setup);
  if (!verdict) {
    log_line(st.tag, cat("refused a session: ", describe(verdict.error())));
    return std::move(verdict.error());
  }
  if (*verdict == scope_table::verdict::create) {
    st.scopes[scope] = spawn_scope(self, setup);
    log_line(st.tag, cat("scope ", scope_label(scope), ": new (", to_string(setup.session.mode), " session)"));
  } else {
    log_line(st.tag, cat("scope ", scope_label(scope), ": a session attaches to its kept variables"));
  }
  auto& actors = st.scopes[scope];
  actors.chief = caf::actor_cast<caf::actor_addr>(self->current_sender());
  if (actors.chief)
    self->monitor(actors.chief);
  const bool fresh = *verdict == scope_table::verdict::create;
  auto rp = self->make_response_promise<setup_reply>();
  self->request(actors.front, st.cfg.request_timeout, init_atom_v, std::move(setup))
    .then([=](setup_reply& reply) mutable { rp.deliver(reply); },
          [=](caf::error& err) mutable {
            if (fresh) { // a setup the new shard refused leaves no scope behind
              self->state.table.forget(scope);
              stop_scope(self, scope);
            }
            rp.deliver(std::move(err));
          });
  return rp;
}

// Ends the sessions whose chief is `chief` (its stop, or it went down).
void end_sessions_of(container_pointer self, const caf::actor_addr& chief, const std::string& why) {
  auto& st = self->state;
  for (auto& [name, actors] : st.scopes)
    if (actors.chief && actors.chief == chief && st.table.phase(name) == scope_phase::in_session) {
      st.table.end(name);
      log_line(st.tag, cat("scope ", scope_label(name), ": session ended (", why, "); keeping its variables"));
    }
}

// Stops every scope and quits.
void stop_all(container_pointer self, const std::string& why) {
  auto& st = self->state;
  for (auto& name : st.table.names())
    stop_scope(self, name);
  log_line(st.tag, cat("stopping", why.empty() ? "" : cat(" (", why, ")")));
  self->quit();
}

// The chiefs of the sessions in progress.
std::vector<caf::actor_addr> session_chiefs(container_pointer self) {
  auto& st = self->state;
  std::vector<caf::actor_addr> out;
  for (auto& [name, actors] : st.scopes)
    if (actors.chief && st.table.phase(name) == scope_phase::in_session
        && std::find(out.begin(), out.end(), actors.chief) == out.end())
      out.push_back(actors.chief);
  return out;
}

// Leaving: once no session is in progress, the node's work is done.
void quit_if_left(container_pointer self) {
  if (self->state.phase == container_phase::leaving && session_chiefs(self).empty())
    stop_all(self, "SIGTERM: every session has ended");
}

void on_sigterm(container_pointer self) {
  auto& st = self->state;
  if (st.phase == container_phase::leaving)
    return stop_all(self, "a second SIGTERM");
  st.phase = container_phase::leaving;
  auto chiefs = session_chiefs(self);
  if (chiefs.empty())
    return stop_all(self, "SIGTERM: no session in progress");
  for (auto& chief : chiefs)
    self->send(caf::actor_cast<chief_actor>(chief), stop_atom_v, st.cfg.index);
  log_line(st.tag, cat("SIGTERM: asked the chief of ", chiefs.size(), " session(s) to end its run; serving until it "
                       "stops this shard (at most cluster.request-timeout)"));
  st.leave_deadline = self->clock().now() + st.cfg.request_timeout;
  self->delayed_send(self, st.cfg.request_timeout, tick_atom_v);
}

resource_container_actor::behavior_type container_behavior(container_pointer self, resource_container_config cfg) {
  auto& st = self->state;
  st.cfg = cfg;
  st.tag = cat("shard ", cfg.index);
  log_exceptions(self, st.tag);
  if (cfg.setup_timeout.count() > 0 && !cfg.keep_alive)
    self->delayed_send(self, cfg.setup_timeout, tick_atom_v);
  if (cfg.stream_port) { // (linked: a gateway that cannot listen ends the node with its error)
    st.streams = make_stream_gateway(self->system(), {cfg.index, caf::actor_cast<parameter_shard_actor>(self),
                                                      cfg.stream_port, cfg.request_timeout, cfg.streams,
                                                      cfg.serve_in_place ? st.cores : nullptr});
    self->link_to(*st.streams);
    self->attach_functor([gateway = *st.streams] { caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown); });
  }
  self->set_down_handler([=](caf::down_msg& msg) {
    auto& st = self->state;
    for (auto it = st.scopes.begin(); it != st.scopes.end(); ++it)
      if (msg.source == it->second.front.address()) {
        auto name = it->first;
        log_line(st.tag, cat("scope ", scope_label(name), ": its shard went down (", caf::to_string(msg.reason), ")"));
        st.table.forget(name);
        st.cores->erase(name);
        st.scopes.erase(it);
        if (!st.cfg.keep_alive) // as a shard alone would: the process ends with it
          self->quit(msg.reason);
        return;
      }
    if (st.cfg.keep_alive) {
      end_sessions_of(self, msg.source, "its chief went down");
      quit_if_left(self);
    }
  });
  return {
    [=](init_atom, shard_setup& setup) -> caf::result<setup_reply> { return on_setup(self, setup); },
    [=](init_atom a, setup_piece& piece) { return to_senders_scope<setup_reply>(self, a, piece); },
    [=](pull_atom a, pull_request& req) { return to_named_scope<pull_reply>(self, a, req); },
    [=](push_atom a, push_request& req) { return to_named_scope<push_reply>(self, a, req); },
    [=](stats_atom a) { return to_senders_scope<shard_stats>(self, a); },
    [=](save_atom a) { return to_senders_scope<shard_snapshot>(self, a); },
    [=](save_atom a, const snapshot_read& r) { return to_senders_scope<snapshot_piece>(self, a, r); },
    [=](stop_atom) {
      auto& st = self->state;
      if (st.cfg.keep_alive) {
        end_sessions_of(self, caf::actor_cast<caf::actor_addr>(self->current_sender()), "its chief stopped");
        return quit_if_left(self);
      }
      stop_all(self, "");
    },
    [=](leave_atom) {
      auto from = self->current_sender();
      if (!from || from->node() != self->node())
        return log_line(self->state.tag, "ignored a leave from another node: only SIGTERM on this node stops it");
      on_sigterm(self);
    },
    [=](stream_atom a, uint32_t worker) -> caf::result<stream_offer> {
      if (!self->state.streams)
        return caf::make_error(errc::invalid_argument,
                               cat(self->state.tag, ": no tensor stream here (cluster.tensor-stream = false on this node)"));
      return self->delegate(*self->state.streams, a, worker);
    },
    [=](tick_atom) {
      if (self->current_sender() != self->ctrl())
        return;
      if (self->state.phase == container_phase::leaving && self->clock().now() >= self->state.leave_deadline)
        return stop_all(self, "SIGTERM: no chief ended its run within cluster.request-timeout");
      if (!self->state.scopes.empty())
        return;
      log_line(self->state.tag, "no setup from the chief within cluster.startup-timeout");
      self->quit(caf::make_error(errc::timeout, cat(self->state.tag, ": no setup from the chief within cluster.startup-timeout")));
    },
    [=](scopes_atom) -> caf::result<std::vector<scope_info>> {
      auto& st = self->state;
      auto names = st.table.names();
      if (names.empty())
        return std::vector<scope_info>{};
      auto rp = self->make_response_promise<std::vector<scope_info>>();
      auto fan = fan_in<scope_info>::make(
        names.size(), [rp](std::vector<scope_info>& all) mutable { rp.deliver(std::move(all)); },
        [rp](std::string why) mutable { rp.deliver(caf::make_error(errc::peer_unreachable, why)); });
      for (size_t i = 0; i < names.size(); ++i)
        self->request(st.scopes[names[i]].front, st.cfg.request_timeout, stats_atom_v)
          .then([=](const shard_stats& stats) { fan->put(i, info_of(self, names[i], stats.version)); },
                [=](caf::error& err) { fan->fail(cat("scope ", scope_label(names[i]), ": ", describe(err))); });
      return rp;
    },
    [=](drop_atom, const std::string& scope) -> caf::result<scope_info> {
      auto& st = self->state;
      if (auto err = st.table.may_drop(scope, st.cfg.index))
        return err;
      auto rp = self->make_response_promise<scope_info>();
      self->request(st.scopes[scope].front, st.cfg.request_timeout, stats_atom_v)
        .then(
          [=](const shard_stats& stats) mutable {
            auto& st = self->state;
            if (auto err = st.table.may_drop(scope, st.cfg.index)) { // a session attached meanwhile
              rp.deliver(std::move(err));
              return;
            }
            auto info = info_of(self, scope, stats.version);
            st.table.drop(scope, st.cfg.index);
            stop_scope(self, scope);
            log_line(st.tag, cat("scope ", scope_label(scope), ": dropped (", info.variables, " variables, ",
                                 info.bytes, " bytes, version ", info.version, ")"));
            rp.deliver(std::move(info));
          },
          [=](caf::error& err) mutable { rp.deliver(std::move(err)); });
      return rp;
    },
  };
}

} // namespace

resource_container_actor make_resource_container(caf::actor_system& sys, resource_container_config cfg) {
  return sys.spawn(container_behavior, std::move(cfg));
}

} // namespace actorps
