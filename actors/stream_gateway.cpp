// The StreamGateway actor: the stream port, the sessions by token, and the connections that
// have not yet said whose they are.
#include "actors/stream_gateway.hpp"
#include "actors/exception_log.hpp"

#include "actors/stream_links.hpp"
#include "actors/stream_session.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "control/log_throttle.hpp"

#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <map>
#include <random>

namespace actorps {

namespace {

// Offers a node may hold that no stream has claimed yet (each keeps a session until
// cluster.request-timeout): a worker needs one per shard link at a time; 20,000 offers of one
// peer kept 20,000 sessions.
constexpr size_t max_unclaimed_offers = 8;

// The budget of one kind of line a stranger provokes: 5 a minute.
log_throttle stranger_budget() {
  return log_throttle{5, std::chrono::seconds(60)};
}

// A session the gateway made, and for whom.
struct offered {
  stream_session_actor session;
  caf::node_id node; // who asked for it
  bool claimed = false;
};

struct gateway_state {
  stream_gateway_config cfg;
  std::string tag;
  std::shared_ptr<stream_links> links = std::make_shared<stream_links>();
  std::shared_ptr<stream_port> port;
  std::map<uint64_t, offered> sessions; // by token
  // Lines strangers provoke, a budget per kind (a flood of one kind hides none of another):
  // refused offers, streams closed before a first frame, with an unknown token, never claimed.
  log_throttle offers_refused = stranger_budget();
  log_throttle closed_early = stranger_budget();
  log_throttle unknown_token = stranger_budget();
  log_throttle never_claimed = stranger_budget();
  std::shared_ptr<std::map<caf::actor_addr, caf::actor>> live = std::make_shared<std::map<caf::actor_addr, caf::actor>>();
  std::mt19937_64 tokens{std::random_device{}()};
  static inline const char* name = "stream_gateway";
};

using gateway_pointer = stream_gateway_actor::stateful_pointer<gateway_state>;

// Logs a line a stranger provoked, within the budget (a flood of strangers logged 6.3 MB).
void stranger_line(gateway_pointer self, log_throttle& budget, const std::string& text) {
  if (auto unsaid = budget.admit(self->clock().now()))
    log_line(self->state.tag, *unsaid == 0 ? text : cat(text, " (and ", *unsaid, " such lines not logged before it)"));
}

stream_gateway_actor::behavior_type gateway_behavior(gateway_pointer self, stream_gateway_config cfg) {
  auto& st = self->state;
  st.cfg = cfg;
  st.tag = cat("shard ", cfg.shard, ": tensor streams");
  log_exceptions(self, st.tag);
  auto port = cfg.listen([links = st.links, owner = caf::actor_cast<caf::actor>(self)](stream_opener open,
                                                                                        std::string peer, int pid) {
    links->add(open, std::move(peer), owner, pid);
  });
  if (port) {
    st.port = *port;
    const auto local = st.port->local_name();
    log_line(st.tag, cat("listening at port ", st.port->port(), local.empty() ? "" : cat(" and, for this host, at @", local)));
  } else { // (quits before its first message)
    log_line(st.tag, describe(port.error()));
    self->quit(port.error());
  }
  self->attach_functor([port = st.port, links = st.links, live = st.live] {
    if (port)
      port->close();
    links->close_all();
    for (auto& [addr, session] : *live) // (sessions end with the gateway)
      caf::anon_send_exit(session, caf::exit_reason::user_shutdown);
  });
  self->set_down_handler([=](caf::down_msg& msg) {
    auto& sessions = self->state.sessions;
    for (auto it = sessions.begin(); it != sessions.end(); ++it)
      if (it->second.session.address() == msg.source) {
        self->state.live->erase(msg.source);
        sessions.erase(it);
        return;
      }
  });
  return {
    [=](stream_atom, uint32_t worker) -> caf::result<stream_offer> {
      auto& st = self->state;
      const caf::node_id node = self->current_sender() ? self->current_sender()->node() : caf::node_id{};
      const auto unclaimed = std::count_if(st.sessions.begin(), st.sessions.end(), [&](const auto& kv) {
        return !kv.second.claimed && kv.second.node == node;
      });
      if (static_cast<size_t>(unclaimed) >= max_unclaimed_offers) {
        const auto why = cat("node ", caf::to_string(node), " holds ", unclaimed, " stream offers no stream has claimed yet (at most ",
                             max_unclaimed_offers, ")");
        stranger_line(self, st.offers_refused, cat("refused a stream offer to worker ", worker, ": ", why));
        return caf::make_error(errc::protocol_error, cat(st.tag, ": ", why));
      }
      uint64_t token = 0;
      while (token == 0 || st.sessions.count(token) > 0)
        token = st.tokens();
      auto session = make_stream_session(self->system(), {st.cfg.shard, worker, token, st.cfg.shards, st.links,
                                                          st.cfg.request_timeout, st.cfg.limits, st.cfg.cores});
      self->monitor(session);
      st.sessions[token] = offered{session, node, false};
      (*st.live)[session.address()] = caf::actor_cast<caf::actor>(session);
      return stream_offer{st.port->port(), token, caf::actor_cast<caf::actor>(session), st.port->local_name(),
                          st.port->local_tls()};
    },
    [=](stream_atom, stream_note& note) {
      auto& st = self->state;
      if (note.what == stream_note::kind::closed) { // (before its first frame named a session)
        if (note.error)
          stranger_line(self, st.closed_early, cat("closed a stream before it said whose it is: ", describe(note.error)));
        return st.links->drop(note.link);
      }
      if (note.what == stream_note::kind::accepted) { // (a stranger that never says whose it is is closed)
        self->delayed_send(self, st.cfg.request_timeout, stream_atom_v,
                           stream_note::expired_link(note.link));
        return;
      }
      if (note.what == stream_note::kind::expired) {
        const auto peer = st.links->peer(note.link);
        if (peer.empty()) // (claimed by its session, or gone)
          return;
        stranger_line(self, st.never_claimed, cat("closed the stream from ", peer, ": no first frame with an offered token within "
                                "cluster.request-timeout"));
        return st.links->drop(note.link);
      }
      if (note.what == stream_note::kind::message) { // (a session's business: only after the token)
        stranger_line(self, st.unknown_token, cat("refused the stream from ", st.links->peer(note.link),
                                                  ": a message came before a frame with an offered token"));
        return st.links->drop(note.link);
      }
      if (note.what != stream_note::kind::received || note.transfer != stream_hello_transfer)
        return;
      const uint64_t token = st.links->token(note.link);
      auto it = st.sessions.find(token);
      if (token == 0 || it == st.sessions.end()) {
        stranger_line(self, st.unknown_token, cat("refused the stream from ", st.links->peer(note.link),
                                ": its first frame carries no token this node offered"));
        return st.links->drop(note.link);
      }
      it->second.claimed = true;
      self->send(it->second.session, stream_atom_v, stream_note::accepted_link(note.link));
    },
  };
}

} // namespace

stream_gateway_actor make_stream_gateway(caf::actor_system& sys, stream_gateway_config cfg) {
  return sys.spawn(gateway_behavior, std::move(cfg));
}

} // namespace actorps
