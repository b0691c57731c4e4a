// The ShardLink actor: the exchanges in flight by transfer id, each waiting for its typed reply,
// then for the reply's frames.
#include "actors/shard_link.hpp"

#include "actors/stream_session.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "control/stream_transfer.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <map>

namespace actorps {

namespace {

// A reply whose tensors are still arriving.
template <class Reply>
struct arriving {
  incoming_tensors tensors;
  Reply reply;
  caf::typed_response_promise<Reply> rp;
};

struct link_state {
  shard_link_config cfg;
  stream_session_actor session;
  std::shared_ptr<stream_connection> conn;
  std::string tag;
  uint64_t next_transfer = stream_hello_transfer + 1;
  std::map<uint64_t, arriving<push_reply>> pushes;
  std::map<uint64_t, arriving<pull_reply>> pulls;
  static inline const char* name = "shard_link";
};

using link_pointer = shard_link_actor::stateful_pointer<link_state>;

// The stream or the shard is gone: every exchange in flight fails, and the link ends.
void end(link_pointer self, caf::error why) {
  auto& st = self->state;
  caf::error reply = why ? why
                         : caf::make_error(errc::peer_unreachable, cat(st.tag, ": the tensor stream closed"));
  for (auto& [id, p] : st.pushes)
    p.rp.deliver(reply);
  for (auto& [id, p] : st.pulls)
    p.rp.deliver(reply);
  st.pushes.clear();
  st.pulls.clear();
  self->quit(reply);
}

// The typed reply came: waits for its tensors (or has them: none).
template <class Reply>
void expect(link_pointer self, std::map<uint64_t, arriving<Reply>>& table, uint64_t transfer, Reply reply,
            std::vector<variable_slice>& (*slices_of)(Reply&), const std::vector<stream_tensor>& tensors,
            caf::typed_response_promise<Reply> rp) {
  auto& st = self->state;
  auto in = incoming_tensors::prepare(tensors, slices_of(reply).size(), st.cfg.max_transfer_bytes,
                                      cat("shard ", st.cfg.shard));
  if (!in) {
    rp.deliver(in.error());
    return end(self, in.error());
  }
  if (in->empty()) {
    rp.deliver(std::move(reply));
    return;
  }
  auto& p = table[transfer];
  p = {std::move(*in), std::move(reply), std::move(rp)};
  st.conn->announce(transfer, p.tensors.slots());
}

// The reply's frames are in.
template <class Reply>
void complete(link_pointer self, std::map<uint64_t, arriving<Reply>>& table, uint64_t transfer,
              std::vector<variable_slice>& (*slices_of)(Reply&)) {
  auto it = table.find(transfer);
  if (it == table.end())
    return;
  auto p = std::move(it->second);
  table.erase(it);
  if (auto err = p.tensors.attach(slices_of(p.reply), cat("shard ", self->state.cfg.shard))) {
    p.rp.deliver(err);
    return end(self, std::move(err));
  }
  p.rp.deliver(std::move(p.reply));
}

std::vector<variable_slice>& values_of(push_reply& r) {
  return r.values;
}

std::vector<variable_slice>& slices_of(pull_reply& r) {
  return r.slices;
}

// A failed exchange: the shard's refusal is the worker's to handle; a timeout or a lost peer
// leaves the stream out of step (a late reply's frames would wait forever), so the link ends.
template <class Reply>
void failed(link_pointer self, caf::typed_response_promise<Reply> rp, caf::error err) {
  rp.deliver(err);
  if (err.category() != caf::atom("actorps"))
    end(self, std::move(err));
}

shard_link_actor::behavior_type link_behavior(link_pointer self, shard_link_config cfg) {
  auto& st = self->state;
  st.cfg = cfg;
  st.tag = cat("tensor stream to shard ", cfg.shard);
  st.session = caf::actor_cast<stream_session_actor>(cfg.offer.session);
  st.conn = cfg.open([hdl = caf::actor_cast<caf::actor>(self)](const stream_note& n) {
    caf::anon_send(hdl, stream_atom_v, n);
  });
  if (st.conn) {
    self->attach_functor([conn = st.conn] { conn->close(); });
    auto token = std::make_shared<uint64_t>(cfg.offer.token);
    st.conn->send_all(stream_hello_transfer, {{token.get(), sizeof(uint64_t)}}, token);
  } else { // (quits before its first message)
    self->quit(caf::make_error(errc::peer_unreachable, cat(st.tag, ": the stream could not be opened")));
  }
  self->monitor(cfg.remote);
  self->monitor(st.session);
  self->set_down_handler([=](caf::down_msg& msg) {
    end(self, msg.reason ? msg.reason
                         : caf::make_error(errc::peer_unreachable, cat(self->state.tag, ": the shard's session ended")));
  });
  return {
    [=](init_atom a, shard_setup& setup) { return self->delegate(self->state.cfg.remote, a, std::move(setup)); },
    [=](pull_atom, pull_request& req) -> caf::result<pull_reply> {
      auto& st = self->state;
      const uint64_t transfer = st.next_transfer++;
      auto rp = self->make_response_promise<pull_reply>();
      self->request(st.session, st.cfg.request_timeout, pull_atom_v, stream_pull{st.cfg.offer.token, transfer, std::move(req)})
        .then(
          [=](stream_pull_reply& r) mutable {
            expect(self, self->state.pulls, transfer, std::move(r.reply), slices_of, r.tensors, rp);
          },
          [=](caf::error& err) mutable { failed(self, rp, std::move(err)); });
      return rp;
    },
    [=](push_atom, push_request& req) -> caf::result<push_reply> {
      auto& st = self->state;
      auto out = outgoing_tensors::detach(req.grads);
      if (!out)
        return std::move(out.error());
      const uint64_t transfer = st.next_transfer++;
      auto keep = std::make_shared<outgoing_tensors>(std::move(*out));
      st.conn->send_all(transfer, keep->pieces(), keep);
      auto rp = self->make_response_promise<push_reply>();
      self->request(st.session, st.cfg.request_timeout, push_atom_v,
                    stream_push{st.cfg.offer.token, transfer, std::move(req), keep->tensors()})
        .then(
          [=](stream_push_reply& r) mutable {
            expect(self, self->state.pushes, transfer, std::move(r.reply), values_of, r.tensors, rp);
          },
          [=](caf::error& err) mutable { failed(self, rp, std::move(err)); });
      return rp;
    },
    [=](stats_atom a) { return self->delegate(self->state.cfg.remote, a); },
    [=](save_atom a) { return self->delegate(self->state.cfg.remote, a); },
    [=](stop_atom a) { self->delegate(self->state.cfg.remote, a); },
    [=](tick_atom) {},
    [=](stream_atom, stream_note& note) {
      switch (note.what) {
        case stream_note::kind::received:
          complete(self, self->state.pushes, note.transfer, values_of);
          return complete(self, self->state.pulls, note.transfer, slices_of);
        case stream_note::kind::closed:
          return end(self, std::move(note.error));
        case stream_note::kind::accepted:
          return;
      }
    },
  };
}

} // namespace

shard_link_actor make_shard_link(caf::actor_system& sys, shard_link_config cfg) {
  return sys.spawn(link_behavior, std::move(cfg));
}

} // namespace actorps
