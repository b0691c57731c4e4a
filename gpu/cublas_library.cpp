// See cublas_library.hpp.
#include "gpu/cublas_library.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <dlfcn.h>

#include <atomic>
#include <mutex>

// (expands cublas_v2.h's macros: cublasCreate -> "cublasCreate_v2", the symbol's real name)
#define ACTORPS_SYMBOL_NAME(x) ACTORPS_SYMBOL_TEXT(x)
#define ACTORPS_SYMBOL_TEXT(x) #x

namespace actorps::gpu {

namespace {

std::mutex load_mutex;
cublas_functions table;
std::atomic<const cublas_functions*> loaded{nullptr};

template <class F>
bool find(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(::dlsym(lib, name));
  return out != nullptr;
}

} // namespace

const char* default_cublas_library() {
  return ACTORPS_CUBLAS_LIBRARY;
}

caf::expected<const cublas_functions*> load_cublas(const std::string& library) {
  std::lock_guard<std::mutex> guard{load_mutex};
  if (auto* done = loaded.load())
    return done;
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) { // (the build's path may not exist where the binary runs: the file name, as the loader finds it)
    const std::string first = ::dlerror();
    const auto slash = library.rfind('/');
    if (slash != std::string::npos)
      lib = ::dlopen(library.substr(slash + 1).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr)
      return caf::make_error(errc::device_unavailable, cat("cannot load cuBLAS (", first, ")"));
  }
  cublas_functions f;
  const char* missing = !find(lib, ACTORPS_SYMBOL_NAME(cublasCreate), f.create) ? ACTORPS_SYMBOL_NAME(cublasCreate)
                        : !find(lib, ACTORPS_SYMBOL_NAME(cublasDestroy), f.destroy) ? ACTORPS_SYMBOL_NAME(cublasDestroy)
                        : !find(lib, ACTORPS_SYMBOL_NAME(cublasSetStream), f.set_stream) ? ACTORPS_SYMBOL_NAME(cublasSetStream)
                        : !find(lib, "cublasSetMathMode", f.set_math_mode) ? "cublasSetMathMode"
                        : !find(lib, ACTORPS_SYMBOL_NAME(cublasSgemm), f.sgemm) ? ACTORPS_SYMBOL_NAME(cublasSgemm)
                        : !find(lib, "cublasGetStatusString", f.status_string) ? "cublasGetStatusString"
                                                                                : nullptr;
  if (missing != nullptr) {
    ::dlclose(lib);
    return caf::make_error(errc::device_unavailable, cat("cannot load cuBLAS: ", library, " has no ", missing));
  }
  table = f;
  loaded.store(&table);
  return &table;
}

const cublas_functions* loaded_cublas() {
  return loaded.load();
}

} // namespace actorps::gpu
