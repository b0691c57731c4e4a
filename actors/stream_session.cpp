// The StreamSession actor: a phase (waiting for its stream, open), the pushes whose frames are
// still arriving, and the container's answers sent back as frames.
#include "actors/stream_session.hpp"

#include "actors/broker_of.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "control/stream_transfer.hpp"

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/sec.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <map>
#include <vector>

namespace actorps {

namespace {

enum class session_phase { awaiting_stream, open };

// A push whose gradients are still arriving on the stream.
struct arriving_push {
  incoming_tensors tensors;
  push_request request;
  caf::typed_response_promise<stream_push_reply> rp;
};

// Destinations announced ahead for a push the link said will come (stream_push::next_transfer).
struct standing_push {
  incoming_tensors tensors;
  std::vector<stream_tensor> form;
  bool received = false; // its frames came before its push
};

// Standing announcements a session keeps at most (each holds a push's worth of memory); their
// bytes stay within one transfer's (cfg.limits.max_transfer_bytes), so the stream's cap (four
// transfers) leaves room for the pushes in flight.
constexpr size_t max_standing = 64;

struct session_state {
  stream_session_config cfg;
  session_phase phase = session_phase::awaiting_stream;
  std::string tag;
  uint64_t link = 0;
  std::shared_ptr<stream_connection> conn;
  std::string peer;
  std::vector<caf::typed_response_promise<bool>> waiting; // asked whether the stream is there
  std::map<uint64_t, arriving_push> arriving;
  std::map<uint64_t, standing_push> standing;
  static inline const char* name = "stream_session";
};

// The session runs in the node's multiplexer (a broker): the typed requests that BASP delivers,
// its stream's notes and its replies meet on the network's thread, with no hand-off to the scheduler.
using session_pointer = caf::stateful_actor<session_state, broker_of_t<stream_session_actor>>*;

// Answers with the container's reply: its slices' tensors (`slices`, inside reply) go back as
// frames of `transfer`, the rest as the typed answer.
template <class Reply, class StreamReply>
void answer(session_pointer self, uint64_t transfer, Reply& reply, std::vector<variable_slice>& slices,
            caf::typed_response_promise<StreamReply> rp) {
  if (stream_bytes(slices) < self->state.cfg.limits.min_stream_bytes) { // small: inside the typed reply
    rp.deliver(StreamReply{std::move(reply), {}});
    return;
  }
  auto out = outgoing_tensors::detach(slices);
  if (!out) {
    rp.deliver(std::move(out.error()));
    return;
  }
  auto keep = std::make_shared<outgoing_tensors>(std::move(*out));
  rp.deliver(StreamReply{std::move(reply), keep->tensors()}); // (first: the small message is not queued behind the frames)
  self->state.conn->send_all(transfer, keep->pieces(), keep);
}

// The scope's store when the node serves it in place (no core: ask the container).
shard_directory::entry in_place(session_pointer self, const std::string& scope) {
  return self->state.cfg.cores ? self->state.cfg.cores->find(scope) : shard_directory::entry{};
}

// Applies a push whose gradients are all here to its scope's store in place, or hands it to the
// container (an aggregator decides, or no store is known); answers with the reply.
void forward_push(session_pointer self, uint64_t transfer, push_request req,
                  caf::typed_response_promise<stream_push_reply> rp) {
  if (auto direct = in_place(self, req.scope); direct.core && direct.direct_pushes) {
    auto reply = direct.core->push(req, self->clock().now());
    if (reply)
      answer(self, transfer, *reply, reply->values, rp);
    else
      rp.deliver(std::move(reply.error()));
    return;
  }
  self->request(self->state.cfg.shards, self->state.cfg.request_timeout, push_atom_v, std::move(req))
    .then([=](push_reply& reply) mutable { answer(self, transfer, reply, reply.values, rp); },
          [=](caf::error& err) mutable { rp.deliver(std::move(err)); });
}

caf::error refuse(session_pointer self, const std::string& what) {
  return caf::make_error(errc::protocol_error, cat(self->state.tag, ": ", what));
}

// The link will push transfer `id` with tensors described as `form`: announces destinations now
// (raw fp32 only: an encoded tensor's size changes from push to push), up to max_standing.
void stand_for(session_pointer self, uint64_t id, const std::vector<stream_tensor>& form, size_t slices) {
  auto& st = self->state;
  const bool raw = std::all_of(form.begin(), form.end(),
                               [](const stream_tensor& t) { return t.encoding == stream_encoding::raw_fp32; });
  uint64_t held = 0;
  for (auto& [other, s] : st.standing)
    held += frame_bytes(s.form);
  if (!raw || form.empty() || id == stream_hello_transfer || st.standing.size() >= max_standing
      || st.standing.count(id) > 0 || st.arriving.count(id) > 0 || held + frame_bytes(form) > st.cfg.limits.max_transfer_bytes)
    return; // (its frames then wait for its push)
  auto in = incoming_tensors::prepare(form, slices, st.cfg.limits.max_transfer_bytes, st.peer);
  if (!in)
    return;
  auto& s = st.standing[id];
  s = {std::move(*in), form, false};
  st.conn->announce(id, s.tensors.slots());
}

// The stream broke or closed: every open exchange fails, and the session ends with it.
void end(session_pointer self, caf::error why, bool say = true) {
  auto& st = self->state;
  // (of CAF's kind, as a lost connection's: the worker reaches the shard again rather than end)
  caf::error reply = caf::make_error(caf::sec::request_receiver_down,
                                     cat(st.tag, ": ", why ? describe(why) : std::string{"the tensor stream closed"}));
  for (auto& [id, p] : st.arriving)
    p.rp.deliver(reply);
  st.arriving.clear();
  for (auto& w : st.waiting)
    w.deliver(reply);
  st.waiting.clear();
  if (why && say)
    log_line(st.tag, describe(why));
  self->quit(std::move(why));
}

// A push's frames and its typed request are both here: its gradients go into the request, which
// goes to the container.
void complete_push(session_pointer self, uint64_t transfer, arriving_push p) {
  if (auto err = p.tensors.attach(p.request.grads, self->state.peer)) {
    p.rp.deliver(err);
    return end(self, std::move(err));
  }
  forward_push(self, transfer, std::move(p.request), p.rp);
}

stream_session_actor::behavior_type session_behavior(session_pointer self, stream_session_config cfg) {
  auto& st = self->state;
  st.cfg = cfg;
  st.tag = cat("shard ", cfg.shard, ": tensor stream of worker ", cfg.worker);
  self->delayed_send(self, cfg.request_timeout, tick_atom_v);
  return {
    [=](stream_atom, uint64_t token) -> caf::result<bool> {
      auto& st = self->state;
      if (token != st.cfg.token)
        return refuse(self, "asked about another stream's token");
      if (st.phase == session_phase::open)
        return true;
      auto rp = self->make_response_promise<bool>();
      st.waiting.push_back(rp);
      return rp;
    },
    [=](push_atom, stream_push& msg) -> caf::result<stream_push_reply> {
      auto& st = self->state;
      if (st.phase != session_phase::open || msg.link != st.cfg.token)
        return refuse(self, "a push for a stream that is not this session's");
      if (msg.next_transfer != 0)
        stand_for(self, msg.next_transfer, msg.tensors, msg.request.grads.size());
      auto rp = self->make_response_promise<stream_push_reply>();
      if (auto ahead = st.standing.find(msg.transfer); ahead != st.standing.end()) { // announced already
        auto s = std::move(ahead->second);
        st.standing.erase(ahead);
        if (s.form != msg.tensors) {
          auto err = refuse(self, cat("push ", msg.transfer, " does not have the form its link announced"));
          end(self, err);
          return err;
        }
        arriving_push p{std::move(s.tensors), std::move(msg.request), rp};
        if (s.received)
          complete_push(self, msg.transfer, std::move(p));
        else
          st.arriving[msg.transfer] = std::move(p);
        return rp;
      }
      if (msg.tensors.empty()) { // small: the gradients came inside the typed message
        forward_push(self, msg.transfer, std::move(msg.request), rp);
        return rp;
      }
      auto in = incoming_tensors::prepare(msg.tensors, msg.request.grads.size(), st.cfg.limits.max_transfer_bytes, st.peer);
      if (!in || st.arriving.count(msg.transfer) > 0 || msg.transfer == stream_hello_transfer) {
        auto err = in ? refuse(self, cat("transfer ", msg.transfer, " is already in use")) : std::move(in.error());
        end(self, err);
        return err;
      }
      if (in->empty()) {
        forward_push(self, msg.transfer, std::move(msg.request), rp);
        return rp;
      }
      auto& p = st.arriving[msg.transfer];
      p = {std::move(*in), std::move(msg.request), rp};
      st.conn->announce(msg.transfer, p.tensors.slots());
      return rp;
    },
    [=](pull_atom, stream_pull& msg) -> caf::result<stream_pull_reply> {
      auto& st = self->state;
      if (st.phase != session_phase::open || msg.link != st.cfg.token)
        return refuse(self, "a pull for a stream that is not this session's");
      auto rp = self->make_response_promise<stream_pull_reply>();
      const uint64_t transfer = msg.transfer;
      if (auto direct = in_place(self, msg.request.scope); direct.core) {
        auto reply = direct.core->pull(msg.request); // (the values in place: no request to the container)
        if (reply)
          answer(self, transfer, *reply, reply->slices, rp);
        else
          rp.deliver(std::move(reply.error()));
        return rp;
      }
      self->request(st.cfg.shards, st.cfg.request_timeout, pull_atom_v, std::move(msg.request))
        .then([=](pull_reply& reply) mutable { answer(self, transfer, reply, reply.slices, rp); },
              [=](caf::error& err) mutable { rp.deliver(std::move(err)); });
      return rp;
    },
    [=](stream_atom, stream_note& note) {
      auto& st = self->state;
      switch (note.what) {
        case stream_note::kind::accepted: {
          if (st.phase == session_phase::open)
            return;
          auto got = st.cfg.links->claim(note.link, caf::actor_cast<caf::actor>(self));
          if (!got.conn)
            return end(self, refuse(self, "its stream closed before the session took it"));
          st.link = note.link;
          st.conn = std::move(got.conn);
          st.peer = std::move(got.peer);
          st.tag = cat(st.tag, " (", st.peer, ")");
          self->attach_functor([conn = st.conn, links = st.cfg.links, link = st.link] {
            conn->close();
            links->release(link);
          });
          st.phase = session_phase::open;
          for (auto& w : st.waiting)
            w.deliver(true);
          st.waiting.clear();
          return;
        }
        case stream_note::kind::received: {
          if (auto ahead = st.standing.find(note.transfer); ahead != st.standing.end()) {
            ahead->second.received = true; // (its push is still on the way)
            return;
          }
          auto it = st.arriving.find(note.transfer);
          if (it == st.arriving.end())
            return;
          auto p = std::move(it->second);
          st.arriving.erase(it);
          return complete_push(self, note.transfer, std::move(p));
        }
        case stream_note::kind::expired:
          return;
        case stream_note::kind::closed: // (the session never closes it itself while it lives)
          if (!note.error) // the worker let go, or its process ended: it is gone as far as this node is concerned
            return end(self, caf::make_error(errc::peer_unreachable, cat(st.tag, ": the worker closed its stream")), false);
          return end(self, std::move(note.error));
      }
    },
    [=](tick_atom) {
      auto& st = self->state;
      if (st.phase == session_phase::awaiting_stream)
        return end(self, refuse(self, "no stream arrived within cluster.request-timeout"));
      st.conn->expire_held(); // (a frame held for a transfer never announced ends the stream)
      self->delayed_send(self, st.cfg.request_timeout, tick_atom_v);
    },
  };
}

} // namespace

stream_session_actor make_stream_session(caf::actor_system& sys, stream_session_config cfg) {
  return sys.middleman().spawn_broker(session_behavior, std::move(cfg));
}

} // namespace actorps
