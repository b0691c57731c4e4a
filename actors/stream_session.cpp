// The StreamSession actor: a phase (waiting for its stream, open), the pushes whose frames are
// still arriving, and the answers sent back in band, the typed reply ahead of its frames.
#include "actors/stream_session.hpp"
#include "actors/exception_log.hpp"

#include "actors/broker_of.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "common/shared_heap.hpp"
#include "control/slicing.hpp"
#include "control/stream_calls.hpp"
#include "control/stream_pairing.hpp"
#include "control/stream_transfer.hpp"

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/sec.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace actorps {

namespace {

enum class session_phase { awaiting_stream, open };

// A push whose gradients arrive on the stream: their destinations and form, announced when its
// message came, or ahead of it where the link promised a push of that form
// (stream_push::next_transfer: a standing announcement, its phase awaiting_message); then its
// request, once here (awaiting_frames). The phases are control/stream_pairing's.
struct arriving_push {
  incoming_tensors tensors;
  std::vector<stream_tensor> form;
  push_request request;
  std::vector<stream_tensor> reply_to{}; // (stream_push::reply_to)
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
  int pid = 0;                              // the worker's process, on the local socket (0: over TCP)
  std::shared_ptr<const shared_view> heap;  // its shared heap, mapped once it offered it
  std::vector<caf::typed_response_promise<bool>> waiting; // asked whether the stream is there
  stream_pairing<arriving_push> pushes;
  static inline const char* name = "stream_session";
};

// The session runs in the node's multiplexer (a broker): its stream's messages and frames, the
// container's answers and its replies meet on the network's thread, with no hand-off to the
// scheduler.
using session_pointer = caf::stateful_actor<session_state, broker_of_t<stream_session_actor>>*;

// Sends a typed message of `transfer` in band, then `frames` (none: the message alone); one that
// cannot be encoded (none of these types can fail so) is refused rather than lost.
template <class T>
void send_call(session_pointer self, uint64_t transfer, const T& msg, std::shared_ptr<outgoing_tensors> frames = nullptr) {
  if (auto err = send_call(*self->state.conn, transfer, msg, std::move(frames)))
    send_call(*self->state.conn, transfer, refusal_of(err));
}

// The exchange `transfer` failed: the link hears why.
void refuse_call(session_pointer self, uint64_t transfer, const caf::error& err) {
  send_call(self, transfer, refusal_of(err));
}

// Where slice i of a reply comes from: a view of the store (copied out rounded to its
// precision, a table's rows gathered) or else the slice's own values (rows gathered for it,
// copies the container made: rounded already).
struct reply_source {
  const float* from = nullptr; // (the slice's own; none: a view's)
  size_t floats = 0;
  const store_view* view = nullptr;

  void copy_to(float* out) const {
    if (view)
      return view->copy_to(out);
    if (floats > 0)
      std::memcpy(out, from, floats * sizeof(float));
  }
};

// The reply's slices as sources: the views' in the store, the others the slices' own values.
std::vector<reply_source> sources_of(const std::vector<variable_slice>& slices, const std::vector<store_view>& views = {}) {
  std::vector<reply_source> out(slices.size());
  for (size_t i = 0; i < slices.size(); ++i)
    out[i] = {slices[i].data.values.data(), slices[i].data.values.size(), nullptr};
  for (auto& v : views)
    out[v.slice] = {nullptr, v.floats, &v};
  return out;
}

// A view's values as a tensor of their own (gathered, rounded, at the view's precision).
tensor_buffer copied(const store_view& v) {
  tensor_buffer out{float_vector(v.floats)};
  v.copy_to(out.values.data());
  out.precision = v.precision;
  return out;
}

// Writes the reply's values into the worker's shared heap where its push set their destinations
// aside (`into`, in the slices' order), each rounded to its precision; whether it could (a heap
// mapped, every slice dense and every destination of the slice's size and inside it: else
// nothing is written).
bool write_into_heap(session_pointer self, const std::vector<variable_slice>& slices,
                     const std::vector<reply_source>& sources, const std::vector<stream_tensor>& into) {
  auto& heap = self->state.heap;
  if (!heap || into.size() != sources.size())
    return false;
  std::vector<float*> to(into.size());
  for (size_t i = 0; i < into.size(); ++i) {
    if (into[i].encoding != stream_encoding::shared_fp32 || into[i].floats != sources[i].floats
        || (sources[i].view == nullptr && sources[i].from == nullptr) || slices[i].data.sparse)
      return false;
    to[i] = heap->floats_at(into[i].at, uint64_t{into[i].floats} * sizeof(float));
    if (to[i] == nullptr)
      return false;
  }
  for (size_t i = 0; i < into.size(); ++i)
    sources[i].copy_to(to[i]);
  return true;
}

// Answers with the reply's values written into the worker's shared heap where its push set their
// destinations aside (`into`): whether it did (else nothing is written or sent).
template <class StreamReply, class Reply>
bool answer_into_heap(session_pointer self, uint64_t transfer, Reply& reply, std::vector<variable_slice>& slices,
                      const std::vector<reply_source>& sources, const std::vector<stream_tensor>& into) {
  if (into.empty() || !write_into_heap(self, slices, sources, into))
    return false;
  for (auto& s : slices)
    s.data.values = float_vector{};
  send_call(self, transfer, StreamReply{std::move(reply), into});
  return true;
}

// Answers with the container's reply: its slices' tensors (`slices`, inside reply) go back as
// frames of `transfer` behind the typed reply, or into the worker's shared heap where its push
// set their destinations aside (`into`).
template <class StreamReply, class Reply>
void answer(session_pointer self, uint64_t transfer, Reply& reply, std::vector<variable_slice>& slices,
            const std::vector<stream_tensor>& into = {}) {
  if (answer_into_heap<StreamReply>(self, transfer, reply, slices, sources_of(slices), into))
    return;
  if (stream_bytes(slices) < self->state.cfg.limits.min_stream_bytes) // small: inside the typed reply
    return send_call(self, transfer, StreamReply{std::move(reply), {}});
  auto out = outgoing_tensors::detach(slices);
  if (!out)
    return refuse_call(self, transfer, out.error());
  auto keep = std::make_shared<outgoing_tensors>(std::move(*out));
  auto tensors = keep->tensors();
  send_call(self, transfer, StreamReply{std::move(reply), std::move(tensors)}, std::move(keep));
}

// Answers with a reply whose dense values are still in the store (views: readable during this
// call alone, under the shard core's lock): where the push set destinations aside in the
// worker's shared heap (`into`), they are written there, rounded to the reply's precision, and
// named; else fp32 ones go as frames written from where they lie (the socket copies what it does
// not take at once); or, where the reply travels whole inside its message (below
// stream-min-bytes) or is encoded, as copies through answer().
template <class StreamReply, class Reply>
void answer_in_place(session_pointer self, uint64_t transfer, Reply& reply, std::vector<variable_slice>& slices,
                     const std::vector<store_view>& views, const std::vector<stream_tensor>& into = {}) {
  const auto sources = sources_of(slices, views);
  if (answer_into_heap<StreamReply>(self, transfer, reply, slices, sources, into))
    return;
  uint64_t bytes = 0;
  bool raw = true;
  for (size_t i = 0; i < slices.size(); ++i) {
    bytes += sources[i].floats * sizeof(float);
    raw = raw && slices[i].data.precision == wire_precision::fp32 && !slices[i].data.sparse
          && sources[i].floats <= max_tensor_floats;
  }
  if (views.empty() || !raw || bytes < self->state.cfg.limits.min_stream_bytes) {
    for (auto& v : views)
      slices[v.slice].data = copied(v);
    return answer<StreamReply>(self, transfer, reply, slices);
  }
  std::vector<float_vector> owned(slices.size()); // (the reply's own tensors, and rows gathered for it)
  std::vector<stream_tensor> tensors;
  std::vector<stream_piece> pieces;
  for (size_t i = 0; i < slices.size(); ++i) {
    const auto* view = sources[i].view;
    const float* from = view ? view->data : sources[i].from;
    if (view && !view->contiguous()) {
      owned[i] = copied(*view).values;
      from = owned[i].data();
    } else if (!view) {
      owned[i] = std::move(slices[i].data.values);
      slices[i].data.values = float_vector{};
      from = owned[i].data();
    }
    const auto n = static_cast<uint32_t>(sources[i].floats);
    tensors.push_back({stream_encoding::raw_fp32, n, static_cast<uint32_t>(n * sizeof(float))});
    pieces.push_back({from, static_cast<uint32_t>(n * sizeof(float))});
  }
  StreamReply msg{std::move(reply), std::move(tensors)};
  if (auto err = send_call_borrowed(*self->state.conn, transfer, msg, std::move(pieces)))
    refuse_call(self, transfer, err);
}

// The scope's store when the node serves it in place (no core: ask the container).
shard_directory::entry in_place(session_pointer self, const std::string& scope) {
  return self->state.cfg.cores ? self->state.cfg.cores->find(scope) : shard_directory::entry{};
}

// Answers a push with the container's reply and then the rows it asks back (`rows`), read now
// from the scope's store in place (`core`).
void answer_with_rows(session_pointer self, shard_core& core, uint64_t transfer, push_reply& reply,
                      const pull_request& rows, const std::vector<stream_tensor>& reply_to) {
  auto err = core.pull_in_place(rows, [&](pull_reply& read, const std::vector<store_view>& views) {
    const size_t before = reply.values.size();
    for (auto& slice : read.slices)
      reply.values.push_back(std::move(slice));
    auto shifted = views; // (their slices now follow the push's values)
    for (auto& v : shifted)
      v.slice += before;
    answer_in_place<stream_push_reply>(self, transfer, reply, reply.values, shifted, reply_to);
  });
  if (err)
    refuse_call(self, transfer, err);
}

// Applies a push whose gradients are all here to its scope's store in place, or hands it to the
// container (an aggregator decides, or no store is known); answers with the reply. With `at`, the
// gradients lie in the worker's shared heap (gradient_spans): the store reads them there; the
// container gets copies (it may keep them past this call). Where the node serves the scope in
// place, the rows a push to the aggregator asks back (sync and ssp, cluster.rows-with-push) are
// checked before it counts and read here once the aggregator answers (sync: the step applied,
// or the push dropped as stale; ssp: after any wait for the slowest worker), from the store in
// place.
void forward_push(session_pointer self, uint64_t transfer, push_request req, const gradient_spans* at = nullptr,
                  const std::vector<stream_tensor>& reply_to = {}) {
  auto direct = in_place(self, req.scope);
  if (direct.core && direct.direct_pushes) {
    auto err = direct.core->push_in_place(
      req, self->clock().now(),
      [&](push_reply& reply, const std::vector<store_view>& views) {
        answer_in_place<stream_push_reply>(self, transfer, reply, reply.values, views, reply_to);
      },
      at);
    if (err)
      refuse_call(self, transfer, err);
    return;
  }
  std::shared_ptr<shard_core> rows_core; // (and the rows it reads)
  pull_request rows;
  if (direct.core && !req.reads.empty()) {
    if (auto err = direct.core->check_reads(req))
      return refuse_call(self, transfer, err);
    rows_core = direct.core;
    rows = pull_request::of(req.worker, std::exchange(req.reads, {}), req.scope);
  }
  for (size_t i = 0; at && i < at->size(); ++i) { // (16-bit values are rounded already: copied as they are)
    const auto precision = req.grads[i].data.precision;
    req.grads[i].data = tensor_copy((*at)[i].data, (*at)[i].size);
    req.grads[i].data.precision = precision;
  }
  self->request(self->state.cfg.shards, self->state.cfg.request_timeout, push_atom_v, std::move(req))
    .then(
      [=](push_reply& reply) {
        if (rows_core)
          return answer_with_rows(self, *rows_core, transfer, reply, rows, reply_to);
        answer<stream_push_reply>(self, transfer, reply, reply.values, reply_to);
      },
      [=](caf::error& err) { refuse_call(self, transfer, err); });
}

// Serves a pull from the scope's store in place, or asks the container; the values go where the
// pull set destinations aside in the worker's shared heap (`reply_to`), else as frames.
void serve_pull(session_pointer self, uint64_t transfer, pull_request req, const std::vector<stream_tensor>& reply_to) {
  if (auto direct = in_place(self, req.scope); direct.core) { // (no request to the container)
    auto err = direct.core->pull_in_place(req, [&](pull_reply& reply, const std::vector<store_view>& views) {
      answer_in_place<stream_pull_reply>(self, transfer, reply, reply.slices, views, reply_to);
    });
    if (err)
      refuse_call(self, transfer, err);
    return;
  }
  self->request(self->state.cfg.shards, self->state.cfg.request_timeout, pull_atom_v, std::move(req))
    .then([=](pull_reply& reply) { answer<stream_pull_reply>(self, transfer, reply, reply.slices, reply_to); },
          [=](caf::error& err) { refuse_call(self, transfer, err); });
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
  st.pushes.each(pairing_phase::awaiting_message, [&](uint64_t, const arriving_push& p) { held += frame_bytes(p.form); });
  if (!raw || form.empty() || id == stream_hello_transfer || st.pushes.count(pairing_phase::awaiting_message) >= max_standing
      || st.pushes.find(id) != nullptr || held + frame_bytes(form) > st.cfg.limits.max_transfer_bytes)
    return; // (its frames then wait for its push)
  auto in = incoming_tensors::prepare(form, slices, st.cfg.limits.max_transfer_bytes, st.peer);
  if (!in)
    return;
  st.pushes.begin(id, arriving_push{std::move(*in), form, {}}, 0);
  st.conn->announce(id, st.pushes.find(id)->tensors.slots());
}

// The stream broke or closed: the session ends with it (the pushes still arriving are dropped:
// nothing of theirs was applied).
void end(session_pointer self, caf::error why, bool say = true) {
  auto& st = self->state;
  // (of CAF's kind, as a lost connection's: the worker reaches the shard again rather than end)
  caf::error reply = caf::make_error(caf::sec::request_receiver_down,
                                     cat(st.tag, ": ", why ? describe(why) : std::string{"the tensor stream closed"}));
  st.pushes.take_all();
  for (auto& w : st.waiting)
    w.deliver(reply);
  st.waiting.clear();
  if (why && say)
    log_line(st.tag, describe(why));
  self->quit(std::move(why));
}

// A push's frames and its typed request are both here: its gradients go into the request, which
// is applied.
void complete_push(session_pointer self, uint64_t transfer, arriving_push p) {
  if (auto err = p.tensors.attach(p.request.grads, self->state.peer)) {
    refuse_call(self, transfer, err);
    return end(self, std::move(err));
  }
  forward_push(self, transfer, std::move(p.request), nullptr, p.reply_to);
}

// Where a push's shared tensors lie in the worker's shared heap, each checked to lie inside it;
// a protocol_error naming the tensor otherwise (or without a heap mapped).
caf::expected<gradient_spans> shared_values(session_pointer self, const stream_push& msg) {
  auto& st = self->state;
  if (!st.heap)
    return refuse(self, cat("push ", msg.transfer, " names values in a shared heap this session has not mapped"));
  if (msg.tensors.size() != msg.request.grads.size())
    return refuse(self, cat("push ", msg.transfer, " describes ", msg.tensors.size(), " tensors for ",
                            msg.request.grads.size(), " slices"));
  gradient_spans out;
  for (size_t i = 0; i < msg.tensors.size(); ++i) {
    const auto& t = msg.tensors[i];
    const float* at = t.encoding == stream_encoding::shared_fp32 && t.bytes == 0 && t.floats <= max_tensor_floats
                          && msg.request.grads[i].data.values.empty()
                        ? st.heap->floats_at(t.at, uint64_t{t.floats} * sizeof(float))
                        : nullptr;
    if (at == nullptr)
      return refuse(self, cat("push ", msg.transfer, "'s tensor ", i, " (", t.floats, " values at ", t.at,
                              ") is not a shared tensor inside the worker's shared heap of ", st.heap->bytes(), " bytes"));
    out.push_back({at, t.floats});
  }
  return out;
}

// A push in band: its gradients inside it, in the worker's shared heap, or as frames behind it
// (announced ahead, or now).
void on_push(session_pointer self, stream_push msg) {
  auto& st = self->state;
  if (msg.link != st.cfg.token)
    return end(self, refuse(self, "a push for a stream that is not this session's"));
  if (std::any_of(msg.tensors.begin(), msg.tensors.end(),
                  [](const stream_tensor& t) { return t.encoding == stream_encoding::shared_fp32; })) {
    if (st.pushes.find(msg.transfer) != nullptr || msg.transfer == stream_hello_transfer)
      return end(self, refuse(self, cat("transfer ", msg.transfer, " is already in use")));
    auto at = shared_values(self, msg);
    if (!at) {
      refuse_call(self, msg.transfer, at.error());
      return end(self, std::move(at.error()));
    }
    return forward_push(self, msg.transfer, std::move(msg.request), &*at, msg.reply_to);
  }
  if (msg.next_transfer != 0)
    stand_for(self, msg.next_transfer, msg.tensors, msg.request.grads.size());
  if (auto* ahead = st.pushes.find(msg.transfer)) { // announced already (or a transfer in use)
    if (st.pushes.phase(msg.transfer) != pairing_phase::awaiting_message)
      return end(self, refuse(self, cat("transfer ", msg.transfer, " is already in use")));
    if (ahead->form != msg.tensors)
      return end(self, refuse(self, cat("push ", msg.transfer, " does not have the form its link announced")));
    ahead->request = std::move(msg.request);
    ahead->reply_to = std::move(msg.reply_to);
    st.pushes.on_message(msg.transfer, true); // (waiting: its frames follow it)
    return;
  }
  if (msg.tensors.empty()) // small: the gradients came inside the typed message
    return forward_push(self, msg.transfer, std::move(msg.request), nullptr, msg.reply_to);
  auto in = incoming_tensors::prepare(msg.tensors, msg.request.grads.size(), st.cfg.limits.max_transfer_bytes, st.peer);
  if (!in || msg.transfer == stream_hello_transfer)
    return end(self, in ? refuse(self, cat("transfer ", msg.transfer, " is already in use")) : std::move(in.error()));
  if (in->empty())
    return forward_push(self, msg.transfer, std::move(msg.request), nullptr, msg.reply_to);
  const uint64_t transfer = msg.transfer;
  st.pushes.begin(transfer, arriving_push{std::move(*in), std::move(msg.tensors), std::move(msg.request),
                                          std::move(msg.reply_to)}, 0);
  st.pushes.on_message(transfer, true);
  st.conn->announce(transfer, st.pushes.find(transfer)->tensors.slots());
}

// A message frame from the link: a pull or a push (anything else breaks the protocol: the
// stream closes).
void on_message(session_pointer self, stream_note& note) {
  auto& st = self->state;
  switch (static_cast<stream_call>(note.call)) {
    case stream_call::pull: {
      auto msg = decode_call<stream_pull>(note.payload, st.peer, note.transfer);
      if (!msg)
        return end(self, std::move(msg.error()));
      if (msg->link != st.cfg.token || msg->transfer != note.transfer)
        return end(self, refuse(self, "a pull for a stream that is not this session's"));
      return serve_pull(self, note.transfer, std::move(msg->request), msg->reply_to);
    }
    case stream_call::push: {
      auto msg = decode_call<stream_push>(note.payload, st.peer, note.transfer);
      if (!msg)
        return end(self, std::move(msg.error()));
      if (msg->transfer != note.transfer)
        return end(self, refuse(self, cat("a push that names transfer ", msg->transfer, " in a frame of ", note.transfer)));
      return on_push(self, std::move(*msg));
    }
    default:
      return end(self, refuse(self, cat("a ", call_name(note.call), " came from the worker's side")));
  }
}

stream_session_actor::behavior_type session_behavior(session_pointer self, stream_session_config cfg) {
  auto& st = self->state;
  st.cfg = cfg;
  st.tag = cat("shard ", cfg.shard, ": tensor stream of ", cfg.worker == chief_worker_id ? std::string{"the chief"}
                                                                                          : cat("worker ", cfg.worker));
  log_exceptions(self, st.tag);
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
    [=](stream_atom, const shared_heap_offer& offer) -> caf::result<bool> {
      auto& st = self->state;
      if (offer.token != st.cfg.token)
        return refuse(self, "offered another stream's shared heap");
      if (st.phase != session_phase::open || st.pid <= 0 || !st.cfg.limits.shared_memory)
        return false; // (no stream yet, a stream over TCP, or this node does not allow it: frames)
      auto view = shared_view::open(st.pid, offer.fd, offer.bytes);
      if (!view) {
        log_line(st.tag, cat("its pushes' gradients stay frames: ", describe(view.error())));
        return false;
      }
      st.heap = std::move(*view);
      return true;
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
          st.pid = got.pid;
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
        case stream_note::kind::message:
          if (st.phase == session_phase::open)
            on_message(self, note);
          return;
        case stream_note::kind::received:
          switch (st.pushes.on_frames(note.transfer)) {
            case pairing_outcome::complete: return complete_push(self, note.transfer, std::move(*st.pushes.take(note.transfer)));
            case pairing_outcome::out_of_order:
              return end(self, refuse(self, cat("the frames of transfer ", note.transfer, " came ahead of its push")));
            case pairing_outcome::waiting:
            case pairing_outcome::unknown: return;
          }
          return;
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
