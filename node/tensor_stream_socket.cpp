// Reading: 24 header bytes into header_, then the payload's bytes into the slot stream_receiver
// handed out, as many as each recv brings. Writing: sendmsg of the front frame's header and
// tensor (an iovec pair from where they lie) until the socket would block.
#include "node/tensor_stream_socket.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/io/middleman.hpp>
#include <caf/io/network/default_multiplexer.hpp>

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/uio.h>

namespace actorps {

using caf::io::network::default_multiplexer;
using caf::io::network::operation;

std::shared_ptr<tensor_stream_socket> tensor_stream_socket::start(caf::actor_system& sys, int fd, std::string peer,
                                                                  size_t max_pending_bytes, callback on_event,
                                                                  unannounced_frames unannounced) {
  auto& mpx = static_cast<default_multiplexer&>(sys.middleman().backend());
  auto s = std::make_shared<tensor_stream_socket>(mpx, fd, std::move(peer), max_pending_bytes, std::move(on_event),
                                                  unannounced);
  mpx.dispatch([s] { s->watch_reads(); });
  return s;
}

tensor_stream_socket::tensor_stream_socket(default_multiplexer& mpx, int fd, std::string peer, size_t cap,
                                           callback on_event, unannounced_frames unannounced)
  : event_handler(mpx, fd),
    receiver_(peer, cap, unannounced),
    on_event_(std::move(on_event)),
    peer_(std::move(peer)) {
}

void tensor_stream_socket::watch_reads() {
  self_ = shared_from_this(); // the loop holds a plain pointer: keep this alive while it does
  activate();
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
    self->out_.push_back({make_stream_frame(transfer, index, data, bytes), transfer, index});
    if (!self->registered_write_) {
      self->registered_write_ = true;
      self->backend().add(operation::write, self->fd(), self.get());
    }
  });
}

void tensor_stream_socket::close() {
  backend().dispatch([self = shared_from_this()] { self->fail(caf::none); });
}

void tensor_stream_socket::graceful_shutdown() {
  fail(caf::none);
}

void tensor_stream_socket::handle_event(operation op) {
  switch (op) {
    case operation::read: return read_some();
    case operation::write: return write_some();
    case operation::propagate_error:
      return fail(caf::make_error(errc::peer_unreachable, cat("tensor stream with ", peer_, ": socket error")));
  }
}

void tensor_stream_socket::read_some() {
  while (open_ && reading_ != reading::held) {
    const bool header = reading_ == reading::header;
    uint8_t* into = header ? header_ + got_ : slot_.data + got_;
    const size_t want = header ? stream_header_bytes - got_ : slot_.bytes - got_;
    const ssize_t n = want == 0 ? 0 : ::recv(fd(), into, want, 0);
    if (want > 0 && n == 0) // the peer closed: fine unless it cut something short
      return fail(receiver_.on_close());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        fail(caf::make_error(errc::peer_unreachable, cat("tensor stream from ", peer_, ": ", std::strerror(errno))));
      return;
    }
    got_ += static_cast<size_t>(n);
    if (header && got_ == stream_header_bytes) {
      auto fate = receiver_.on_header(header_);
      if (!fate)
        return fail(fate.error());
      got_ = 0;
      if (fate->what == frame_fate::kind::hold) { // read nothing more until its announcement
        reading_ = reading::held;
        return backend().del(operation::read, fd(), this);
      }
      slot_ = fate->slot;
      reading_ = reading::payload;
    }
    if (reading_ == reading::payload && got_ == slot_.bytes) {
      auto done = receiver_.on_payload();
      got_ = 0;
      reading_ = reading::header;
      if (!done)
        return fail(done.error());
      if (*done)
        on_event_({stream_event::kind::received, **done, 0, caf::none});
    }
  }
}

void tensor_stream_socket::write_some() {
  while (open_ && !out_.empty()) {
    const outgoing& o = out_.front();
    const stream_frame& f = o.frame;
    iovec iov[2];
    int parts = 0;
    if (sent_ < stream_header_bytes) {
      iov[parts++] = {const_cast<uint8_t*>(f.header.data()) + sent_, stream_header_bytes - sent_};
      if (f.bytes > 0)
        iov[parts++] = {const_cast<uint8_t*>(f.data), f.bytes};
    } else {
      const size_t done = sent_ - stream_header_bytes;
      iov[parts++] = {const_cast<uint8_t*>(f.data) + done, f.bytes - done};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(parts);
    const ssize_t n = ::sendmsg(fd(), &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        fail(caf::make_error(errc::peer_unreachable, cat("tensor stream to ", peer_, ": ", std::strerror(errno))));
      return;
    }
    sent_ += static_cast<size_t>(n);
    if (sent_ == stream_header_bytes + f.bytes) {
      const stream_event written{stream_event::kind::written, o.transfer, o.index, caf::none};
      out_.pop_front();
      sent_ = 0;
      on_event_(written);
    }
  }
  if (open_ && out_.empty() && registered_write_) {
    registered_write_ = false;
    backend().del(operation::write, fd(), this);
  }
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
