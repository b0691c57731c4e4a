// Detaching, checking and re-attaching a transfer's tensors (see stream_transfer.hpp).
#include "control/stream_transfer.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <limits>

namespace actorps {

uint64_t stream_bytes(const std::vector<variable_slice>& slices) {
  uint64_t n = 0;
  for (auto& s : slices)
    n += payload_bytes(s.data);
  return n;
}

caf::expected<outgoing_tensors> outgoing_tensors::detach(std::vector<variable_slice>& slices) {
  outgoing_tensors out;
  out.tensors_.reserve(slices.size());
  out.raw_.resize(slices.size());
  out.encoded_.resize(slices.size());
  for (size_t i = 0; i < slices.size(); ++i) {
    auto& data = slices[i].data;
    if (data.values.size() > max_tensor_floats)
      return caf::make_error(errc::invalid_argument, cat("slice ", i, " of variable ", slices[i].variable, " has ",
                                                         data.values.size(), " values, more than a frame carries"));
    stream_tensor t;
    if (data.precision == wire_precision::fp32 && !data.sparse) {
      t.encoding = stream_encoding::raw_fp32;
      t.floats = static_cast<uint32_t>(data.values.size());
      t.bytes = static_cast<uint32_t>(data.values.size() * sizeof(float));
      out.raw_[i].values = std::move(data.values);
    } else {
      t.encoding = stream_encoding::encoded;
      caf::binary_serializer sink{nullptr, out.encoded_[i]};
      if (auto err = sink(data))
        return err;
      if (out.encoded_[i].size() > std::numeric_limits<uint32_t>::max())
        return caf::make_error(errc::invalid_argument, cat("slice ", i, " encodes to more bytes than a frame carries"));
      t.bytes = static_cast<uint32_t>(out.encoded_[i].size());
    }
    data.values = float_vector{};
    out.tensors_.push_back(t);
  }
  return out;
}

std::vector<stream_piece> outgoing_tensors::pieces() const {
  std::vector<stream_piece> out;
  out.reserve(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].encoding == stream_encoding::raw_fp32)
      out.push_back({raw_[i].values.data(), tensors_[i].bytes});
    else if (tensors_[i].encoding == stream_encoding::encoded)
      out.push_back({encoded_[i].data(), tensors_[i].bytes});
  return out;
}

namespace {

// Raw tensors whose values lie at data[i] in `heap`, described as shared_fp32 tensors there; none
// where one is not raw or not in the heap.
std::vector<stream_tensor> shared_forms(const std::vector<stream_tensor>& tensors, const std::vector<const float*>& data,
                                        const shared_heap& heap) {
  std::vector<stream_tensor> out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].encoding != stream_encoding::raw_fp32 || !heap.owns(data[i], tensors[i].bytes))
      return {};
    out.push_back({stream_encoding::shared_fp32, tensors[i].floats, 0, heap.offset_of(data[i])});
  }
  return out;
}

} // namespace

std::optional<outgoing_tensors> outgoing_tensors::in_heap(std::vector<variable_slice>& slices, const shared_heap& heap) {
  if (slices.empty())
    return std::nullopt;
  for (auto& s : slices) {
    const auto& v = s.data.values;
    if (s.data.sparse || v.size() > max_tensor_floats || !heap.owns(v.data(), v.size() * sizeof(float)))
      return std::nullopt;
  }
  outgoing_tensors out;
  out.encoded_.resize(slices.size());
  for (auto& s : slices) {
    auto& v = s.data.values;
    out.tensors_.push_back({stream_encoding::shared_fp32, static_cast<uint32_t>(v.size()), 0, heap.offset_of(v.data())});
    out.raw_.emplace_back(std::move(v));
    v = float_vector{};
  }
  return out;
}

uint64_t frame_bytes(const std::vector<stream_tensor>& tensors) {
  uint64_t n = 0;
  for (auto& t : tensors)
    n += t.bytes;
  return n;
}

uint64_t outgoing_tensors::bytes() const {
  return frame_bytes(tensors_);
}

caf::expected<incoming_tensors> incoming_tensors::prepare(const std::vector<stream_tensor>& tensors, size_t slices,
                                                          uint64_t max_bytes, const std::string& peer) {
  auto refuse = [&](const std::string& what) {
    return caf::make_error(errc::protocol_error, cat("tensor stream from ", peer, ": transfer refused: ", what));
  };
  if (tensors.size() != slices)
    return refuse(cat(tensors.size(), " tensors described for ", slices, " slices"));
  uint64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    if (t.encoding == stream_encoding::raw_fp32) {
      if (t.floats > max_tensor_floats)
        return refuse(cat("tensor ", i, " has ", t.floats, " values, more than ", max_tensor_floats));
      if (uint64_t{t.floats} * sizeof(float) != t.bytes)
        return refuse(cat("tensor ", i, " announces ", t.bytes, " bytes for ", t.floats, " fp32 values"));
    } else if (t.encoding == stream_encoding::shared_fp32) {
      return refuse(cat("tensor ", i, " names values in a shared heap where a frame is due"));
    } else if (t.encoding != stream_encoding::encoded) {
      return refuse(cat("tensor ", i, " has unknown encoding ", static_cast<unsigned>(t.encoding)));
    }
    total += t.bytes;
    if (total > max_bytes)
      return refuse(cat("more than ", max_bytes, " bytes in one transfer"));
  }
  incoming_tensors in;
  in.tensors_ = tensors;
  in.raw_.resize(tensors.size());
  in.encoded_.resize(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].encoding == stream_encoding::raw_fp32)
      in.raw_[i].resize(tensors[i].floats);
    else
      in.encoded_[i].resize(tensors[i].bytes);
  return in;
}

std::vector<stream_slot> incoming_tensors::slots() {
  std::vector<stream_slot> out;
  out.reserve(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); ++i)
    out.push_back(tensors_[i].encoding == stream_encoding::raw_fp32
                    ? stream_slot{reinterpret_cast<uint8_t*>(raw_[i].data()), tensors_[i].bytes}
                    : stream_slot{reinterpret_cast<uint8_t*>(encoded_[i].data()), tensors_[i].bytes});
  return out;
}

std::vector<stream_tensor> incoming_tensors::shared_in(const shared_heap& heap) const {
  std::vector<const float*> data;
  for (auto& r : raw_)
    data.push_back(r.data());
  return shared_forms(tensors_, data, heap);
}

caf::error incoming_tensors::attach(std::vector<variable_slice>& slices, const std::string& peer) {
  if (slices.size() != tensors_.size())
    return caf::make_error(errc::protocol_error, cat("tensor stream from ", peer, ": ", tensors_.size(),
                                                     " tensors for ", slices.size(), " slices"));
  for (size_t i = 0; i < slices.size(); ++i) {
    auto& data = slices[i].data;
    if (tensors_[i].encoding == stream_encoding::raw_fp32) {
      data.values = std::move(raw_[i]); // (its precision the slice's: values written into a shared
      data.sparse = false;                 // heap are already rounded to it; frames' are fp32)
      continue;
    }
    caf::binary_deserializer source{nullptr, encoded_[i]};
    tensor_buffer decoded;
    auto err = source(decoded);
    if (!err && source.remaining() != 0)
      err = caf::make_error(errc::protocol_error, cat(source.remaining(), " bytes after the tensor"));
    if (err)
      return caf::make_error(errc::protocol_error, cat("tensor stream from ", peer, ": tensor ", i, " of variable ",
                                                       slices[i].variable, ": ", describe(err)));
    data = std::move(decoded);
    encoded_[i] = {};
  }
  return caf::none;
}

} // namespace actorps
