// The ShardLink actor: the exchanges in flight by transfer id, each waiting for its typed reply
// (a message frame on the stream), then for the reply's frames.
#include "actors/shard_link.hpp"
#include "actors/exception_log.hpp"

#include "actors/broker_of.hpp"
#include "actors/stream_session.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "control/stream_calls.hpp"
#include "control/stream_pairing.hpp"
#include "control/stream_transfer.hpp"

#include <caf/actor_clock.hpp>
#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/sec.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/timespan.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>

namespace actorps {

namespace {

// What an exchange in flight holds: its promise, and the reply's tensors as they arrive. Where
// the reply's form is known before it comes (pulls, and pushes answered with fp32 values: the
// same ranges at full precision) their destinations are announced with the request, so the
// frames are read as they arrive behind the typed reply; otherwise when the typed reply says
// what they are. Its phase (the reply due, then its frames) is control/stream_pairing's.
template <class Reply>
struct exchange {
  caf::typed_response_promise<Reply> rp;
  std::vector<stream_tensor> expected; // announced with the request (empty: none)
  incoming_tensors tensors;
  std::optional<Reply> reply;          // the typed reply, once here
  // A push's gradients left in the shared heap: the ps node reads them until it answers.
  std::shared_ptr<outgoing_tensors> shared = nullptr;
  // The reply's destinations set aside in the shared heap (not announced), and how the push
  // offered them (stream_push::reply_to): the ps node may write the values there until it answers.
  incoming_tensors reply_to{};
  std::vector<stream_tensor> offered{};
};

template <class Reply>
using exchanges = stream_pairing<exchange<Reply>>;

// open: exchanges go over the stream; closing: the stream closed (or the shard's session
// ended), and the link waits for the shard's own fate before it ends with it.
enum class link_phase { open, closing };

struct link_state {
  shard_link_config cfg;
  link_phase phase = link_phase::open;
  caf::error closed; // closing: the link's end, should the shard outlive the grace
  caf::actor_clock::time_point grace_until; // closing: when the shard's fate stops mattering
  uint64_t ticks = 0;         // tick intervals (tick_interval) since the link began
  stream_session_actor session;
  std::shared_ptr<stream_connection> conn;
  std::string tag;
  uint64_t next_transfer = stream_hello_transfer + 1;
  exchanges<push_reply> pushes;
  exchanges<pull_reply> pulls;
  // Ids promised to the session for a later push of a form (stream_push::next_transfer), by form.
  std::multimap<std::string, uint64_t> promised;
  // The session mapped this process's shared heap: pushes whose gradients lie in it name them there.
  const shared_heap* heap = nullptr;
  static inline const char* name = "shard_link";
};

// The link runs in the worker node's multiplexer (a broker): its requests go out on the stream,
// and the stream's messages, frames and notes arrive, on the network's thread, with no hand-off.
using link_pointer = caf::stateful_actor<link_state, broker_of_t<shard_link_actor>>*;

std::string peer_of(link_pointer self) {
  return cat("shard ", self->state.cfg.shard);
}

// Blocks of the shared heap held by pushes the link gave up on without an answer (their gradients,
// their reply's destinations): the ps node may still read or write them (a push queued on the
// stream it has not read yet), so they are never handed out again. Few: a link gives up only on a
// timeout or a lost stream.
void retire(std::shared_ptr<const void> in_heap) {
  static std::mutex mtx;
  static std::vector<std::shared_ptr<const void>> retired;
  if (!in_heap)
    return;
  std::lock_guard<std::mutex> guard{mtx};
  retired.push_back(std::move(in_heap));
}

// The same for an exchange's blocks (its gradients, and the destinations the ps node may write).
template <class Exchange>
void retire(Exchange& x) {
  retire(std::move(x.shared));
  if (!x.offered.empty())
    retire(std::make_shared<incoming_tensors>(std::move(x.reply_to)));
}

// Every exchange in flight fails with `why` (as a lost BASP connection's: of CAF's kind, so the
// worker waits for the link's end to learn why, instead of taking it for the shard's refusal).
caf::error fail_exchanges(link_pointer self, const caf::error& why) {
  auto& st = self->state;
  caf::error reply = caf::make_error(caf::sec::request_receiver_down,
                                     cat(st.tag, ": ", why ? describe(why) : std::string{"the tensor stream closed"}));
  for (auto& x : st.pushes.take_all()) {
    retire(x);
    x.rp.deliver(reply);
  }
  for (auto& x : st.pulls.take_all()) {
    retire(x);
    x.rp.deliver(reply);
  }
  return reply;
}

// The stream is out of step (a reply that does not fit, a timeout): the exchanges fail and the
// link ends now; the worker reaches the shard again.
void end(link_pointer self, caf::error why) {
  self->quit(fail_exchanges(self, why));
}

// The shard went down: the link ends as it did (quit normally: the run is over, the worker
// stops; else the worker reaches it again).
void end_with_shard(link_pointer self, const caf::error& reason) {
  fail_exchanges(self, reason);
  self->quit(reason ? reason : caf::error{caf::exit_reason::normal});
}

// The stream closed, or the shard's session ended: the ps node may be stopping at the run's
// end, or gone. Its connections close in no particular order, so the link waits for the shard's
// own down message (the shard quit normally, or its node is unreachable) and ends as the shard
// did; a shard still there after min(cluster.request-timeout, 2 s) lost only its stream.
void close(link_pointer self, caf::error why) {
  auto& st = self->state;
  if (st.phase == link_phase::closing)
    return;
  st.phase = link_phase::closing;
  st.closed = fail_exchanges(self, why);
  const auto grace = std::min<std::chrono::milliseconds>(st.cfg.request_timeout, std::chrono::seconds(2));
  st.grace_until = self->clock().now() + grace;
  self->delayed_send(self, grace, tick_atom_v);
}

// The link's exchanges are the deadline of a worker's pulls and pushes (the worker sets no timer
// of its own on them: detail::shard_deadline), so it ticks ticks_per_deadline times per
// cluster.request-timeout: an unanswered exchange fails between one and 1.25 timeouts after it
// began.
constexpr uint64_t ticks_per_deadline = 4;

caf::timespan tick_interval(const shard_link_config& cfg) {
  return std::max(caf::timespan{std::chrono::milliseconds(1)},
                  caf::timespan{cfg.request_timeout} / static_cast<int64_t>(ticks_per_deadline));
}

// Every tick: an exchange begun ticks_per_deadline whole intervals ago (or more) has waited at
// least cluster.request-timeout for its answer, and the stream is out of step (its late frames
// would wait for ever), so the link ends as a request timeout would end it.
void expire(link_pointer self) {
  auto& st = self->state;
  ++st.ticks;
  if (st.pulls.any_late(st.ticks, ticks_per_deadline) || st.pushes.any_late(st.ticks, ticks_per_deadline))
    return end(self, caf::make_error(caf::sec::request_timeout,
                                     cat(st.tag, ": no answer within cluster.request-timeout (",
                                         st.cfg.request_timeout.count(), " ms)")));
  self->delayed_send(self, tick_interval(st.cfg), tick_atom_v);
}

// A new exchange; announces the reply's destinations now when their form is known.
template <class Reply>
void begin(link_pointer self, exchanges<Reply>& table, uint64_t transfer, caf::typed_response_promise<Reply> rp,
           std::vector<stream_tensor> expected) {
  auto& st = self->state;
  table.begin(transfer, exchange<Reply>{std::move(rp), {}, {}, std::nullopt}, st.ticks); // (ids are the link's own: never in use)
  if (expected.empty() || frame_bytes(expected) < st.cfg.limits.min_stream_bytes) // (it comes inside the typed reply)
    return;
  auto in = incoming_tensors::prepare(expected, expected.size(), st.cfg.limits.max_transfer_bytes, peer_of(self));
  if (!in) // (too large to hold at once: announced when the reply says so, and refused then)
    return;
  auto& x = *table.find(transfer);
  x.expected = std::move(expected);
  x.tensors = std::move(*in);
  st.conn->announce(transfer, x.tensors.slots());
}

// A link whose shared heap the session mapped: the destinations of a push's or a pull's reply of
// form `expected` set aside in the heap instead of announced, for the session to write the
// values into (stream_push::reply_to, stream_pull::reply_to, returned); none where they are too
// small for frames or the heap has no room (the reply's frames are then announced when it says
// what they are).
template <class Reply>
std::vector<stream_tensor> set_aside(link_pointer self, exchange<Reply>& x, const std::vector<stream_tensor>& expected) {
  auto& st = self->state;
  if (st.heap == nullptr || expected.empty() || frame_bytes(expected) < st.cfg.limits.min_stream_bytes)
    return {};
  caf::expected<incoming_tensors> in{incoming_tensors{}};
  {
    shared_heap::scope in_heap;
    in = incoming_tensors::prepare(expected, expected.size(), st.cfg.limits.max_transfer_bytes, peer_of(self));
  }
  if (!in)
    return {};
  auto offered = in->shared_in(*st.heap);
  if (!offered.empty()) {
    x.reply_to = std::move(*in);
    x.offered = offered;
  }
  return offered;
}

// A new exchange whose reply has the form `expected`: with the shared heap mapped its
// destinations are set aside there (returned, for the request's reply_to), else announced.
template <class Reply>
std::vector<stream_tensor> begin_with_destinations(link_pointer self, exchanges<Reply>& table, uint64_t transfer,
                                                   caf::typed_response_promise<Reply> rp,
                                                   std::vector<stream_tensor> expected) {
  if (self->state.heap == nullptr) {
    begin(self, table, transfer, std::move(rp), std::move(expected));
    return {};
  }
  begin(self, table, transfer, std::move(rp), {});
  return set_aside(self, *table.find(transfer), expected);
}

// The reply and its frames are in: the tensors go into the reply, which goes to the worker.
template <class Reply>
void finish(link_pointer self, exchanges<Reply>& table, uint64_t transfer,
            std::vector<variable_slice>& (*slices_of)(Reply&)) {
  auto x = std::move(*table.take(transfer));
  if (x.tensors.empty()) { // (no frames: the values, if any, came inside the reply)
    x.rp.deliver(std::move(*x.reply));
    return;
  }
  if (auto err = x.tensors.attach(slices_of(*x.reply), peer_of(self))) {
    x.rp.deliver(err);
    return end(self, std::move(err));
  }
  x.rp.deliver(std::move(*x.reply));
}

// The peer is out of step with an exchange: it fails, and the link ends.
template <class Reply>
void out_of_step(link_pointer self, exchanges<Reply>& table, uint64_t transfer, const std::string& what) {
  auto err = caf::make_error(errc::protocol_error, cat(self->state.tag, ": ", what, " of transfer ", transfer));
  if (auto x = table.take(transfer)) {
    retire(*x);
    x->rp.deliver(err);
  }
  end(self, std::move(err));
}

// The typed reply came, with its tensors' description: whether frames follow it.
template <class Reply>
void on_reply(link_pointer self, exchanges<Reply>& table, uint64_t transfer, Reply reply,
              std::vector<variable_slice>& (*slices_of)(Reply&), const std::vector<stream_tensor>& tensors) {
  auto* x = table.find(transfer);
  if (x == nullptr) // (a late reply: the link has ended the exchange)
    return;
  bool frames_follow = false;
  if (!tensors.empty() && tensors.front().encoding == stream_encoding::shared_fp32) {
    // the values were written into the destinations the push set aside in the shared heap
    if (x->offered.empty() || tensors != x->offered)
      return out_of_step(self, table, transfer, "a reply in the shared heap where the push set none aside");
    x->tensors = std::move(x->reply_to);
    x->offered.clear();
  } else if (tensors.empty()) { // the values came inside the typed reply (fewer bytes than the session's stream-min-bytes)
    if (!x->expected.empty())
      self->state.conn->cancel(transfer, std::make_shared<incoming_tensors>(std::move(x->tensors)));
    x->expected.clear();
    x->tensors = incoming_tensors{};
  } else if (!x->expected.empty()) {
    if (tensors != x->expected)
      return out_of_step(self, table, transfer, "a reply without the form its request announced");
    frames_follow = true;
  } else {
    auto in = incoming_tensors::prepare(tensors, slices_of(reply).size(), self->state.cfg.limits.max_transfer_bytes,
                                        peer_of(self));
    if (!in) {
      table.take(transfer)->rp.deliver(in.error());
      return end(self, in.error());
    }
    x->tensors = std::move(*in);
    frames_follow = !x->tensors.empty();
    if (frames_follow)
      self->state.conn->announce(transfer, x->tensors.slots());
  }
  x->reply = std::move(reply);
  switch (table.on_message(transfer, frames_follow)) {
    case pairing_outcome::complete: return finish(self, table, transfer, slices_of);
    case pairing_outcome::out_of_order: return out_of_step(self, table, transfer, "a second reply");
    case pairing_outcome::waiting:
    case pairing_outcome::unknown: return;
  }
}

// A reply's frames are in.
template <class Reply>
void on_received(link_pointer self, exchanges<Reply>& table, uint64_t transfer,
                 std::vector<variable_slice>& (*slices_of)(Reply&)) {
  switch (table.on_frames(transfer)) {
    case pairing_outcome::complete: return finish(self, table, transfer, slices_of);
    case pairing_outcome::out_of_order: return out_of_step(self, table, transfer, "frames ahead of the reply");
    case pairing_outcome::waiting:
    case pairing_outcome::unknown: return;
  }
}

// A failed exchange: the shard's refusal is the worker's to handle (no frames come: an announced
// reply is withdrawn); a timeout or a lost peer leaves the stream out of step (a late reply's
// frames would wait forever), so the link ends.
template <class Reply>
void on_failed(link_pointer self, exchanges<Reply>& table, uint64_t transfer, caf::error err) {
  auto x = table.take(transfer);
  if (!x)
    return;
  x->rp.deliver(err);
  if (err.category() != caf::atom("actorps")) { // (no answer: the ps node may still use them)
    retire(*x);
    return end(self, std::move(err));
  }
  if (!x->expected.empty())
    self->state.conn->cancel(transfer, std::make_shared<incoming_tensors>(std::move(x->tensors)));
}

std::vector<variable_slice>& values_of(push_reply& r) {
  return r.values;
}

std::vector<variable_slice>& slices_of(pull_reply& r) {
  return r.slices;
}

// The key under which a push's form is promised: its frames' sizes when every one is raw fp32
// (the session announces only those ahead), else "" (no promise).
std::string form_key(const std::vector<stream_tensor>& tensors) {
  std::string key;
  for (auto& t : tensors) {
    if (t.encoding != stream_encoding::raw_fp32)
      return {};
    key += std::to_string(t.floats);
    key += ',';
  }
  return key;
}

// A push's transfer id, and the id it promises for the next push of its form (0: none). A step's
// parts repeat every step: a push takes an id promised for its form (its destinations are
// announced on the ps node already) and promises one for the next. form "": no promise.
std::pair<uint64_t, uint64_t> transfer_ids(link_state& st, const std::string& form) {
  uint64_t transfer = 0;
  if (auto it = form.empty() ? st.promised.end() : st.promised.find(form); it != st.promised.end()) {
    transfer = it->second;
    st.promised.erase(it);
  } else {
    transfer = st.next_transfer++;
  }
  if (form.empty())
    return {transfer, 0};
  const uint64_t next = st.next_transfer++;
  st.promised.emplace(form, next);
  return {transfer, next};
}

// The raw fp32 frames of `counts` values each.
std::vector<stream_tensor> raw_frames(const std::vector<size_t>& counts) {
  std::vector<stream_tensor> out;
  for (auto n : counts)
    out.push_back({stream_encoding::raw_fp32, static_cast<uint32_t>(n), static_cast<uint32_t>(n * sizeof(float))});
  return out;
}

// A typed reply, or a refusal, in band from the session.
void on_message(link_pointer self, stream_note& note) {
  auto& st = self->state;
  switch (static_cast<stream_call>(note.call)) {
    case stream_call::pull_reply: {
      auto r = decode_call<stream_pull_reply>(note.payload, peer_of(self), note.transfer);
      if (!r)
        return end(self, std::move(r.error()));
      return on_reply(self, st.pulls, note.transfer, std::move(r->reply), slices_of, r->tensors);
    }
    case stream_call::push_reply: {
      auto r = decode_call<stream_push_reply>(note.payload, peer_of(self), note.transfer);
      if (!r)
        return end(self, std::move(r.error()));
      return on_reply(self, st.pushes, note.transfer, std::move(r->reply), values_of, r->tensors);
    }
    case stream_call::refusal: {
      auto r = decode_call<stream_refusal>(note.payload, peer_of(self), note.transfer);
      if (!r)
        return end(self, std::move(r.error()));
      auto err = error_of(*r);
      if (st.pulls.find(note.transfer) != nullptr)
        return on_failed(self, st.pulls, note.transfer, std::move(err));
      return on_failed(self, st.pushes, note.transfer, std::move(err));
    }
    default:
      return end(self, caf::make_error(errc::protocol_error, cat(st.tag, ": a ", call_name(note.call),
                                                              " came from the shard's side")));
  }
}

shard_link_actor::behavior_type link_behavior(link_pointer self, shard_link_config cfg) {
  auto& st = self->state;
  st.cfg = cfg;
  st.tag = cat("tensor stream to shard ", cfg.shard);
  log_exceptions(self, st.tag);
  st.session = caf::actor_cast<stream_session_actor>(cfg.offer.session);
  st.conn = cfg.open([hdl = caf::actor_cast<caf::actor>(self)](stream_note n) {
    caf::anon_send(hdl, stream_atom_v, std::move(n));
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
  self->delayed_send(self, tick_interval(cfg), tick_atom_v);
  self->set_down_handler([=](caf::down_msg& msg) {
    if (msg.source == self->state.cfg.remote.address())
      return end_with_shard(self, msg.reason);
    close(self, msg.reason ? msg.reason
                           : caf::make_error(errc::peer_unreachable, cat(self->state.tag, ": the shard's session ended")));
  });
  return {
    [=](init_atom a, shard_setup& setup) { return self->delegate(self->state.cfg.remote, a, std::move(setup)); },
    [=](init_atom a, setup_piece& piece) { return self->delegate(self->state.cfg.remote, a, std::move(piece)); },
    [=](pull_atom, pull_request& req) -> caf::result<pull_reply> {
      auto& st = self->state;
      if (st.phase == link_phase::closing) // (the stream is gone: the shard's fate decides)
        return st.closed;
      const uint64_t transfer = st.next_transfer++;
      std::vector<size_t> counts; // (a shard answers a pull with fp32 values of the ranges)
      for (auto& r : req.ranges)
        counts.push_back(r.count);
      auto rp = self->make_response_promise<pull_reply>();
      auto reply_to = begin_with_destinations(self, st.pulls, transfer, rp, raw_frames(counts));
      if (auto err = send_call(*st.conn, transfer,
                               stream_pull{st.cfg.offer.token, transfer, std::move(req), std::move(reply_to)}))
        on_failed(self, st.pulls, transfer, std::move(err));
      return rp;
    },
    [=](push_atom, push_request& req) -> caf::result<push_reply> {
      auto& st = self->state;
      if (st.phase == link_phase::closing) // (the stream is gone: the shard's fate decides)
        return st.closed;
      // The values that come back: the same ranges, at fp32 unless asked otherwise (or, into the
      // shared heap, as floats rounded to the reply's precision),
      std::vector<size_t> counts;
      const bool dense_reply = req.reply_topk == 0.0 && (req.reply_precision == wire_precision::fp32 || st.heap != nullptr);
      if (!req.return_values || dense_reply) {
        if (req.return_values)
          for (auto& g : req.grads)
            if (!g.by_rows()) // (row slices are answered with no values)
              counts.push_back(g.data.values.size());
        for (auto& r : req.reads) // then the rows asked back (fp32)
          counts.push_back(r.count);
      }
      // A step's row slices name the batch's rows: their sizes change from step to step.
      const bool same_form = std::none_of(req.grads.begin(), req.grads.end(),
                                          [](const variable_slice& g) { return g.by_rows(); });
      // (none: small, the gradients go inside the typed message; gradients downloaded into the
      // shared heap stay there, at any precision: the ps node reads them in place)
      std::shared_ptr<outgoing_tensors> frames, shared;
      if (stream_bytes(req.grads) >= st.cfg.limits.min_stream_bytes) {
        if (auto in_heap = st.heap ? outgoing_tensors::in_heap(req.grads, *st.heap) : std::nullopt)
          shared = std::make_shared<outgoing_tensors>(std::move(*in_heap));
        else if (auto out = outgoing_tensors::detach(req.grads))
          frames = std::make_shared<outgoing_tensors>(std::move(*out));
        else
          return std::move(out.error());
      }
      const auto [transfer, next] = transfer_ids(st, frames && same_form ? form_key(frames->tensors()) : std::string{});
      auto rp = self->make_response_promise<push_reply>();
      auto reply_to = begin_with_destinations(self, st.pushes, transfer, rp, raw_frames(counts));
      if (shared)
        st.pushes.find(transfer)->shared = shared;
      auto tensors = frames ? frames->tensors() : shared ? shared->tensors() : std::vector<stream_tensor>{};
      if (auto err = send_call(*st.conn, transfer,
                               stream_push{st.cfg.offer.token, transfer, std::move(req), std::move(tensors), next,
                                           std::move(reply_to)},
                               std::move(frames)))
        on_failed(self, st.pushes, transfer, std::move(err));
      return rp;
    },
    [=](stats_atom a) { return self->delegate(self->state.cfg.remote, a); },
    [=](save_atom a) { return self->delegate(self->state.cfg.remote, a); },
    [=](save_atom a, const snapshot_read& r) { return self->delegate(self->state.cfg.remote, a, r); },
    [=](stop_atom a) { self->delegate(self->state.cfg.remote, a); },
    [=](tick_atom) { // open: the exchanges' deadlines; closing: the grace is over, the shard is still there
      auto& st = self->state;
      if (st.phase == link_phase::open)
        return expire(self);
      if (self->clock().now() >= st.grace_until)
        self->quit(st.closed);
    },
    [=](stream_atom, const shared_heap_offer&) { // (open_shard_link: the session mapped the heap)
      self->state.heap = shared_heap::process();
    },
    [=](stream_atom, stream_note& note) {
      switch (note.what) {
        case stream_note::kind::received: // (ids are unique across both tables)
          if (self->state.pushes.find(note.transfer) != nullptr)
            return on_received(self, self->state.pushes, note.transfer, values_of);
          return on_received(self, self->state.pulls, note.transfer, slices_of);
        case stream_note::kind::message:
          return on_message(self, note);
        case stream_note::kind::closed:
          return close(self, std::move(note.error));
        case stream_note::kind::accepted:
        case stream_note::kind::expired:
          return;
      }
    },
  };
}

} // namespace

shard_link_actor make_shard_link(caf::actor_system& sys, shard_link_config cfg) {
  return sys.middleman().spawn_broker(link_behavior, std::move(cfg));
}

} // namespace actorps
