// Frames are checked field by field against the ledger before a destination is handed out; the
// ledger changes only when a payload is complete.
#include "control/tensor_stream.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "messages/stream_protocol.hpp"

#include <algorithm>
#include <utility>

namespace actorps {

namespace {

constexpr uint32_t magic = 0x53545041; // "APTS" in little-endian byte order
constexpr uint16_t version = 1;

template <class T>
void put(uint8_t*& out, T x) {
  for (size_t i = 0; i < sizeof(T); ++i)
    *out++ = static_cast<uint8_t>(static_cast<uint64_t>(x) >> (8 * i));
}

template <class T>
T get(const uint8_t*& in) {
  uint64_t x = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    x |= static_cast<uint64_t>(*in++) << (8 * i);
  return static_cast<T>(x);
}

} // namespace

void encode_stream_header(const stream_frame_header& h, uint8_t* out) {
  put<uint32_t>(out, magic);
  put<uint16_t>(out, version);
  put<uint16_t>(out, h.message ? stream_message_flag : 0);
  put<uint64_t>(out, h.transfer);
  put<uint32_t>(out, h.index);
  put<uint32_t>(out, h.bytes);
}

caf::expected<stream_frame_header> decode_stream_header(const uint8_t* in) {
  const auto m = get<uint32_t>(in);
  if (m != magic)
    return caf::make_error(errc::protocol_error, cat("stream frame: bad magic ", m, " (not a tensor stream)"));
  const auto v = get<uint16_t>(in);
  if (v != version)
    return caf::make_error(errc::protocol_error, cat("stream frame: version ", v, ", this node speaks ", version));
  const auto flags = get<uint16_t>(in);
  if (flags != 0 && flags != stream_message_flag)
    return caf::make_error(errc::protocol_error, cat("stream frame: unknown flags ", flags));
  stream_frame_header h;
  h.message = flags == stream_message_flag;
  h.transfer = get<uint64_t>(in);
  h.index = get<uint32_t>(in);
  h.bytes = get<uint32_t>(in);
  return h;
}

stream_frame make_stream_frame(uint64_t transfer, uint32_t index, const void* data, uint32_t bytes) {
  stream_frame f{{}, static_cast<const uint8_t*>(data), bytes};
  encode_stream_header({transfer, index, bytes}, f.header.data());
  return f;
}

stream_frame make_message_frame(uint64_t transfer, uint32_t call, const void* data, uint32_t bytes) {
  stream_frame f{{}, static_cast<const uint8_t*>(data), bytes};
  encode_stream_header({transfer, call, bytes, true}, f.header.data());
  return f;
}

stream_receiver::stream_receiver(std::string peer, size_t max_pending_bytes, unannounced_frames unannounced)
  : peer_(std::move(peer)), cap_(max_pending_bytes), unannounced_(unannounced) {
}

caf::error stream_receiver::refuse(const std::string& what) const {
  return caf::make_error(errc::protocol_error, cat("tensor stream from ", peer_, ": ", what));
}

caf::error stream_receiver::announce(uint64_t id, std::vector<stream_slot> slots) {
  if (transfers_.count(id) > 0)
    return refuse(cat("transfer ", id, " announced twice"));
  if (slots.empty())
    return refuse(cat("transfer ", id, " announced without tensors"));
  size_t bytes = 0;
  for (const auto& s : slots)
    bytes += s.bytes;
  if (pending_bytes_ + bytes > cap_)
    return refuse(cat("transfer ", id, " of ", bytes, " bytes would hold ", pending_bytes_ + bytes,
                      " bytes pending, more than the cap of ", cap_));
  transfer t;
  t.received.assign(slots.size(), false);
  t.missing = slots.size();
  t.bytes = bytes;
  t.slots = std::move(slots);
  transfers_.emplace(id, std::move(t));
  pending_bytes_ += bytes;
  return caf::none;
}

caf::expected<frame_fate> stream_receiver::on_header(const uint8_t* header) {
  if (phase_ != phase::awaiting_header)
    return refuse(cat("a header while ",
                      phase_ == phase::holding ? "a frame of transfer " + std::to_string(current_.transfer) + " was held"
                                               : cat("the payload of tensor ", current_.index, " of transfer ",
                                                     current_.transfer, " was due")));
  auto h = decode_stream_header(header);
  if (!h)
    return refuse(context_of(h.error()));
  if (h->message) {
    if (h->index < stream_first_call || h->index > stream_last_call)
      return refuse(cat("a message of unknown kind ", h->index, " for transfer ", h->transfer));
    if (h->bytes > cap_)
      return refuse(cat("a message of ", h->bytes, " bytes for transfer ", h->transfer, ", more than the cap of ", cap_));
    current_ = *h;
    phase_ = phase::reading_message;
    return frame_fate{frame_fate::kind::message, {nullptr, h->bytes}};
  }
  if (transfers_.count(h->transfer) == 0 && unannounced_ == unannounced_frames::hold) {
    current_ = *h;
    phase_ = phase::holding;
    return frame_fate{frame_fate::kind::hold, {}};
  }
  auto slot = place(*h);
  if (!slot)
    return slot.error();
  return frame_fate{frame_fate::kind::store, *slot};
}

std::optional<uint64_t> stream_receiver::held() const {
  if (phase_ != phase::holding)
    return std::nullopt;
  return current_.transfer;
}

caf::expected<stream_slot> stream_receiver::resume() {
  if (phase_ != phase::holding)
    return refuse("resume() without a held frame");
  return place(current_); // (a refusal keeps the frame held: the stream closes anyway)
}

// Checks h against its announced transfer; on success its payload is due next.
caf::expected<stream_slot> stream_receiver::place(const stream_frame_header& h) {
  auto it = transfers_.find(h.transfer);
  if (it == transfers_.end())
    return refuse(cat("frame of unannounced transfer ", h.transfer));
  const transfer& t = it->second;
  if (h.index >= t.slots.size())
    return refuse(cat("frame for tensor ", h.index, " of transfer ", h.transfer, ", which has ", t.slots.size()));
  if (t.received[h.index])
    return refuse(cat("second frame for tensor ", h.index, " of transfer ", h.transfer));
  const stream_slot slot = t.slots[h.index];
  if (h.bytes != slot.bytes)
    return refuse(cat("frame of ", h.bytes, " bytes for tensor ", h.index, " of transfer ", h.transfer,
                      ", announced ", slot.bytes));
  current_ = h;
  phase_ = phase::reading_payload;
  return slot;
}

caf::expected<std::optional<uint64_t>> stream_receiver::on_payload() {
  if (phase_ != phase::reading_payload)
    return refuse("a payload without its header");
  phase_ = phase::awaiting_header;
  auto it = transfers_.find(current_.transfer);
  transfer& t = it->second; // (on_header found it; nothing removes it in between)
  t.received[current_.index] = true;
  if (--t.missing > 0)
    return std::optional<uint64_t>{};
  pending_bytes_ -= t.bytes;
  transfers_.erase(it);
  return std::optional<uint64_t>{current_.transfer};
}

caf::expected<stream_message_header> stream_receiver::on_message() {
  if (phase_ != phase::reading_message)
    return refuse("a message's payload without its header");
  phase_ = phase::awaiting_header;
  return stream_message_header{current_.transfer, current_.index};
}

caf::error stream_receiver::on_close() {
  std::string cut;
  if (phase_ == phase::reading_message)
    cut = cat("a message of transfer ", current_.transfer, " (", current_.bytes, " bytes)");
  if (phase_ == phase::reading_payload)
    cut = cat("the payload of tensor ", current_.index, " of transfer ", current_.transfer, " (", current_.bytes,
              " bytes)");
  if (phase_ == phase::holding)
    cut = cat("a frame of transfer ", current_.transfer, " held for its announcement");
  for (const auto& [id, t] : transfers_)
    cut += cat(cut.empty() ? "" : "; ", "transfer ", id, " (", t.missing, " of ", t.slots.size(),
               " tensors missing)");
  transfers_.clear();
  pending_bytes_ = 0;
  phase_ = phase::awaiting_header;
  if (cut.empty())
    return caf::none;
  return refuse(cat("connection closed, cutting short ", cut));
}

bool stream_receiver::cancel(uint64_t id) {
  auto it = transfers_.find(id);
  if (it == transfers_.end() || (phase_ == phase::reading_payload && current_.transfer == id))
    return false;
  pending_bytes_ -= it->second.bytes;
  transfers_.erase(it);
  return true;
}

} // namespace actorps
