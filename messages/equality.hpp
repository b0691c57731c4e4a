// Field-wise operator== for the plain message structs (C++17 has no defaulted ==).
#pragma once

#include <tuple>

/// Defines operator==(const type&, const type&) comparing the listed fields of `v`,
/// e.g. ACTORPS_FIELDWISE_EQ(push_reply, v.version).
#define ACTORPS_FIELDWISE_EQ(type, ...)                                                      \
  inline bool operator==(const type& x, const type& y) {                                     \
    auto fields = [](const type& v) { return std::tie(__VA_ARGS__); };                       \
    return fields(x) == fields(y);                                                           \
  }                                                                                          \
  inline bool operator!=(const type& x, const type& y) {                                     \
    return !(x == y);                                                                        \
  }
