// For the files that interpose a library's function from the executable (basp_guard.cpp,
// openssl_error_queue.cpp): the library's own definition, to call after ours.
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace actorps {

/// The next definition of the symbol `name` after ours in the lookup order (dlsym RTLD_NEXT),
/// as Fn. Aborts naming `who` and the symbol when there is none: the library is linked in
/// whenever the interposing file is, so that cannot happen.
template <class Fn>
Fn next_definition(const char* name, const char* who) {
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  if (fn == nullptr) {
    std::fprintf(stderr, "error: %s: no definition of %s after ours\n", who, name);
    std::abort();
  }
  return fn;
}

} // namespace actorps
