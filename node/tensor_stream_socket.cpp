// Reading: 24 header bytes into header_, then the payload's bytes into the slot stream_receiver
// handed out, as many as each recv (or SSL_read) brings. Writing: one sendmsg of the queued
// frames' headers and tensors (iovecs from where they lie, up to max_write_pieces; under TLS one
// SSL_write per piece) until the socket would block. Under TLS nothing but the handshake runs
// until it completes.
#include "node/tensor_stream_socket.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "node/multiplexer_call.hpp"

#include <caf/io/middleman.hpp>
#include <caf/io/network/default_multiplexer.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <sys/socket.h>
#include <sys/uio.h>

namespace actorps {

using caf::io::network::default_multiplexer;
using caf::io::network::operation;

std::shared_ptr<tensor_stream_socket> tensor_stream_socket::start(caf::actor_system& sys, int fd, std::string peer,
                                                                  size_t max_pending_bytes, callback on_event,
                                                                  unannounced_frames unannounced,
                                                                  std::unique_ptr<stream_tls> tls) {
  auto& mpx = static_cast<default_multiplexer&>(sys.middleman().backend());
  auto s = std::make_shared<tensor_stream_socket>(mpx, fd, std::move(peer), max_pending_bytes, std::move(on_event),
                                                  unannounced, std::move(tls));
  track_stream_handler(mpx, s, [weak = std::weak_ptr<tensor_stream_socket>(s)] {
    if (auto live = weak.lock())
      live->close();
  });
  mpx.dispatch([s] {
    s->watch_reads();
    if (s->tls_)
      s->advance_handshake(); // (a client speaks first)
  });
  return s;
}

tensor_stream_socket::tensor_stream_socket(default_multiplexer& mpx, int fd, std::string peer, size_t cap,
                                           callback on_event, unannounced_frames unannounced,
                                           std::unique_ptr<stream_tls> tls)
  : event_handler(mpx, fd),
    receiver_(std::move(peer), cap, unannounced),
    tls_(std::move(tls)),
    on_event_(std::move(on_event)) {
}

void tensor_stream_socket::watch_reads() {
  self_ = shared_from_this(); // the loop holds a plain pointer: keep this alive while it does
  activate();
}

void tensor_stream_socket::want_writes() {
  if (!registered_write_) {
    registered_write_ = true;
    backend().add(operation::write, fd(), this);
  }
}

void tensor_stream_socket::advance_handshake() {
  const auto st = tls_->handshake();
  switch (st.what) {
    case stream_tls::step::state::moved: // established: what waited for it goes now
      if (!out_.empty())
        want_writes();
      return read_some();
    case stream_tls::step::state::want_write: return want_writes();
    case stream_tls::step::state::want_read: return;
    case stream_tls::step::state::closed:
    case stream_tls::step::state::failed:
      return fail(caf::make_error(errc::protocol_error, cat("tensor stream with ", receiver_.peer(), ": TLS handshake: ", st.error)));
  }
}

ssize_t tensor_stream_socket::receive(uint8_t* into, size_t n) {
  if (!tls_) {
    const ssize_t got = ::recv(fd(), into, n, 0);
    if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      lost("from", std::strerror(errno));
    return got;
  }
  const auto st = tls_->read(into, n);
  switch (st.what) {
    case stream_tls::step::state::moved: return static_cast<ssize_t>(st.bytes);
    case stream_tls::step::state::closed: return 0;
    case stream_tls::step::state::want_write: want_writes(); return -1;
    case stream_tls::step::state::want_read: return -1;
    case stream_tls::step::state::failed: break;
  }
  lost("from", cat("TLS: ", st.error));
  return -1;
}

ssize_t tensor_stream_socket::transmit() {
  const stream_frame& f = out_.front().frame;
  if (tls_) { // one piece of the front frame at a time (a record per call)
    const auto st = sent_ < stream_header_bytes
                      ? tls_->write(f.header.data() + sent_, stream_header_bytes - sent_)
                      : tls_->write(f.data + (sent_ - stream_header_bytes), f.bytes - (sent_ - stream_header_bytes));
    if (st.what == stream_tls::step::state::moved)
      return static_cast<ssize_t>(st.bytes);
    if (st.what == stream_tls::step::state::closed || st.what == stream_tls::step::state::failed)
      lost("to", cat("TLS: ", st.error));
    return -1;
  }
  // Plain TCP: the queued frames' headers and tensors from where they lie, as many as one
  // sendmsg takes (a push of many tensors is one system call, not one per frame).
  iovec iov[max_write_pieces];
  size_t parts = 0;
  size_t done = sent_; // bytes of the front frame written already
  for (auto it = out_.begin(); it != out_.end() && parts + 2 <= max_write_pieces; ++it, done = 0) {
    const stream_frame& g = it->frame;
    if (done < stream_header_bytes)
      iov[parts++] = {const_cast<uint8_t*>(g.header.data() + done), stream_header_bytes - done};
    const size_t data_done = done > stream_header_bytes ? done - stream_header_bytes : 0;
    if (data_done < g.bytes)
      iov[parts++] = {const_cast<uint8_t*>(g.data + data_done), g.bytes - data_done};
  }
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = parts;
  ssize_t n = ::sendmsg(fd(), &msg, MSG_NOSIGNAL);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    lost("to", std::strerror(errno));
  return n;
}

void tensor_stream_socket::announce(uint64_t id, std::vector<stream_slot> slots) {
  backend().dispatch([self = shared_from_this(), id, slots = std::move(slots)]() mutable {
    if (!self->open_)
      return;
    if (auto err = self->receiver_.announce(id, std::move(slots)))
      return self->fail(std::move(err));
    if (self->reading_ != reading::held || self->receiver_.held() != id)
      return;
    auto slot = self->receiver_.resume(); // the held frame's transfer is here: read on
    if (!slot)
      return self->fail(slot.error());
    self->slot_ = *slot;
    self->got_ = 0;
    self->reading_ = reading::payload;
    self->watch_reads();
    self->read_some();
  });
}

void tensor_stream_socket::send(uint64_t transfer, uint32_t index, const void* data, uint32_t bytes) {
  backend().dispatch([self = shared_from_this(), transfer, index, data, bytes] {
    if (!self->open_)
      return;
    self->out_.push_back({make_stream_frame(transfer, index, data, bytes), transfer, index, nullptr});
    self->flush();
  });
}

void tensor_stream_socket::cancel(uint64_t id, std::shared_ptr<const void> keep) {
  backend().dispatch([self = shared_from_this(), id, keep = std::move(keep)] {
    if (self->open_ && self->receiver_.reading() == id) // (frames came after all: its destination is being written)
      self->fail(caf::make_error(errc::protocol_error, cat("tensor stream from ", self->receiver_.peer(),
                                                           ": frames of refused transfer ", id)));
    else if (self->open_)
      self->receiver_.cancel(id);
  });
}

void tensor_stream_socket::send_all(uint64_t transfer, std::vector<stream_piece> pieces,
                                    std::shared_ptr<const void> keep) {
  backend().dispatch([self = shared_from_this(), transfer, pieces = std::move(pieces), keep = std::move(keep)] {
    if (!self->open_ || pieces.empty())
      return;
    for (uint32_t i = 0; i < pieces.size(); ++i)
      self->out_.push_back({make_stream_frame(transfer, i, pieces[i].data, pieces[i].bytes), transfer, i, keep});
    self->flush();
  });
}

void tensor_stream_socket::queue_call(uint64_t transfer, uint32_t call, std::shared_ptr<std::vector<char>> message,
                                      const std::vector<stream_piece>& pieces, std::shared_ptr<const void> keep,
                                      bool borrowed) {
  out_.push_back({make_message_frame(transfer, call, message->data(), static_cast<uint32_t>(message->size())),
                  transfer, call, message});
  for (uint32_t i = 0; i < pieces.size(); ++i)
    out_.push_back({make_stream_frame(transfer, i, pieces[i].data, pieces[i].bytes), transfer, i, keep, borrowed});
  flush();
}

void tensor_stream_socket::send_call(uint64_t transfer, uint32_t call, std::vector<char> message,
                                     std::vector<stream_piece> pieces, std::shared_ptr<const void> keep) {
  auto bytes = std::make_shared<std::vector<char>>(std::move(message));
  backend().dispatch([self = shared_from_this(), transfer, call, bytes = std::move(bytes), pieces = std::move(pieces),
                      keep = std::move(keep)] {
    if (self->open_)
      self->queue_call(transfer, call, bytes, pieces, keep, false);
  });
}

void tensor_stream_socket::send_call_borrowed(uint64_t transfer, uint32_t call, std::vector<char> message,
                                              std::vector<stream_piece> pieces) {
  auto bytes = std::make_shared<std::vector<char>>(std::move(message));
  if (std::this_thread::get_id() == backend().thread_id()) { // written now; the rest copied below
    if (open_) {
      queue_call(transfer, call, bytes, pieces, nullptr, true);
      own_borrowed();
    }
    return;
  }
  auto copies = std::make_shared<std::vector<std::vector<uint8_t>>>(); // (another thread: copied first)
  copies->reserve(pieces.size());
  for (auto& p : pieces) {
    auto* from = static_cast<const uint8_t*>(p.data);
    copies->emplace_back(from, from + p.bytes);
    p.data = copies->back().data();
  }
  send_call(transfer, call, std::move(*bytes), std::move(pieces), std::move(copies));
}

void tensor_stream_socket::own_borrowed() {
  for (auto& o : out_) {
    if (!o.borrowed)
      continue;
    auto copy = std::make_shared<std::vector<uint8_t>>(o.frame.data, o.frame.data + o.frame.bytes);
    o.frame.data = copy->data(); // (sent_ counts bytes of the front frame: the same in the copy)
    o.keep = std::move(copy);
    o.borrowed = false;
  }
}

void tensor_stream_socket::expire_held() {
  backend().dispatch([self = shared_from_this()] {
    if (!self->open_)
      return;
    if (self->reading_ != reading::held) {
      self->hold_seen_ = 0;
      return;
    }
    if (self->hold_seen_ != self->holds_) { // a hold since the last look: give it an interval
      self->hold_seen_ = self->holds_;
      return;
    }
    self->fail(caf::make_error(errc::protocol_error, cat("tensor stream from ", self->receiver_.peer(), ": a frame of transfer ",
                                                         self->receiver_.held().value_or(0), " waited a whole "
                                                         "cluster.request-timeout for an announcement that never came")));
  });
}

void tensor_stream_socket::close() { // (waits, once: see node/multiplexer_call.hpp)
  if (closing_.exchange(true))
    return;
  run_on_multiplexer(backend(), [self = shared_from_this()] { self->fail(caf::none); });
}

void tensor_stream_socket::graceful_shutdown() {
  fail(caf::none);
}

void tensor_stream_socket::handle_event(operation op) {
  if (tls_ && !tls_->established() && op != operation::propagate_error && open_)
    return advance_handshake();
  switch (op) {
    case operation::read: return read_some();
    case operation::write: return write_some();
    case operation::propagate_error:
      return lost("with", "socket error");
  }
}

void tensor_stream_socket::read_some() {
  while (open_ && reading_ != reading::held) {
    uint8_t* into = nullptr;
    size_t want = 0;
    switch (reading_) {
      case reading::header: into = header_ + got_; want = stream_header_bytes - got_; break;
      case reading::payload: into = slot_.data + got_; want = slot_.bytes - got_; break;
      case reading::message: { // (grown as the bytes come: a header alone allocates little)
        const size_t size = std::min<size_t>(message_bytes_, std::max<size_t>(2 * got_, message_chunk));
        if (message_.size() < size)
          message_.resize(size);
        into = reinterpret_cast<uint8_t*>(message_.data()) + got_;
        want = size - got_;
        break;
      }
      case reading::held: return;
    }
    const ssize_t n = want == 0 ? 0 : receive(into, want);
    if (want > 0 && n == 0) // the peer closed: fine unless it cut something short
      return fail(receiver_.on_close());
    if (n < 0) {
      if (open_ && !tls_ && errno == EINTR)
        continue;
      return; // (nothing more now, or receive() failed the stream)
    }
    got_ += static_cast<size_t>(n);
    if (reading_ == reading::header && got_ == stream_header_bytes) {
      auto fate = receiver_.on_header(header_);
      if (!fate)
        return fail(fate.error());
      got_ = 0;
      if (fate->what == frame_fate::kind::hold) { // read nothing more until its announcement
        reading_ = reading::held;
        ++holds_;
        return backend().del(operation::read, fd(), this);
      }
      if (fate->what == frame_fate::kind::message) {
        reading_ = reading::message;
        message_bytes_ = fate->slot.bytes;
        message_.clear();
      } else {
        slot_ = fate->slot;
        reading_ = reading::payload;
      }
    }
    if (reading_ == reading::payload && got_ == slot_.bytes) {
      auto done = receiver_.on_payload();
      got_ = 0;
      reading_ = reading::header;
      if (!done)
        return fail(done.error());
      if (*done)
        on_event_({stream_event::kind::received, **done, 0, caf::none});
    } else if (reading_ == reading::message && got_ == message_bytes_) {
      auto done = receiver_.on_message();
      got_ = 0;
      reading_ = reading::header;
      if (!done)
        return fail(done.error());
      on_event_({stream_event::kind::message, done->transfer, done->call, caf::none, std::move(message_)});
    }
  }
}

// Writes what the socket takes now (saving a trip through the multiplexer's poll); waits for it
// to become writable for the rest. Under TLS nothing goes before the handshake completed.
void tensor_stream_socket::flush() {
  if (tls_ && !tls_->established())
    return;
  if (!registered_write_)
    write_some();
  if (open_ && !out_.empty())
    want_writes();
}

void tensor_stream_socket::write_some() {
  std::vector<stream_event> written; // (told once the queue is in order again: a callback may queue more)
  while (open_ && !out_.empty()) {
    const ssize_t n = transmit();
    if (n < 0) {
      if (open_ && !tls_ && errno == EINTR)
        continue;
      break;
    }
    for (size_t left = static_cast<size_t>(n); !out_.empty();) { // the frames those bytes completed
      const outgoing& o = out_.front();
      const size_t rest = stream_header_bytes + o.frame.bytes - sent_;
      if (left < rest) {
        sent_ += left;
        break;
      }
      left -= rest;
      written.push_back({stream_event::kind::written, o.transfer, o.index, caf::none});
      out_.pop_front();
      sent_ = 0;
    }
    for (auto& e : written)
      on_event_(e);
    written.clear();
  }
  if (open_ && out_.empty() && registered_write_) {
    registered_write_ = false;
    backend().del(operation::write, fd(), this);
  }
}

void tensor_stream_socket::lost(const char* direction, const std::string& why) {
  fail(caf::make_error(errc::peer_unreachable, cat("tensor stream ", direction, " ", receiver_.peer(), ": ", why)));
}

void tensor_stream_socket::fail(caf::error err) {
  if (!open_)
    return;
  open_ = false;
  auto cut = receiver_.on_close(); // (empties the ledger; an owner's close() reports no error)
  out_.clear();
  if (reading_ != reading::held)
    backend().del(operation::read, fd(), this);
  if (registered_write_)
    backend().del(operation::write, fd(), this);
  registered_write_ = false;
  ::shutdown(fd(), SHUT_RDWR);
  on_event_({stream_event::kind::closed, 0, 0, std::move(err)});
}

void tensor_stream_socket::removed_from_loop(operation) {
  // Released once off the loop entirely, after this event's handling (the multiplexer may call
  // again for the other direction in the same breath).
  if (eventbf() == 0 && self_)
    backend().post([last = std::move(self_)] {});
}

} // namespace actorps
