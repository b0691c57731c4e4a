// actorps-train: the single-process baseline trainer (same model and options as the cluster).
#include "common/memory_policy.hpp"
#include "compute/blas_kernels.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "config/train_options.hpp"
#include "train/memory_need.hpp"
#include "train/trainer.hpp"

#include <cstdio>

namespace {

struct train_config : actorps::strict_config {
  actorps::option_values values;
  train_config() { actorps::declare_train_options(*this, values); }
};

} // namespace

int main(int argc, char** argv) {
  actorps::reexec_with_better_blas(argv);
  actorps::keep_freed_memory();
  train_config cfg;
  switch (cfg.parse_strict(argc, argv)) {
    case actorps::strict_config::outcome::help_printed: return 0;
    case actorps::strict_config::outcome::failed: return 2;
    case actorps::strict_config::outcome::run: break;
  }
  auto settings = actorps::validate(cfg.values);
  if (settings) // (a configuration this machine cannot hold is refused now, naming the figure)
    if (auto err = actorps::check_memory(actorps::estimate_memory(*settings), actorps::available_memory()))
      settings = std::move(err);
  if (!settings) {
    std::fprintf(stderr, "error: %s\n", actorps::describe(settings.error()).c_str());
    return 2;
  }
  auto summary = actorps::train_single_process(*settings);
  if (!summary) {
    std::fprintf(stderr, "error: %s\n", actorps::describe(summary.error()).c_str());
    return actorps::exit_code(summary.error()); // (2: a bad configuration, e.g. model.init-from)
  }
  std::printf("test_accuracy=%.4f best_validation_accuracy=%.4f examples_per_second=%.0f "
              "wall_seconds=%.1f steps=%lld epochs=%.2f summary=%s/%s/summary.json\n",
              summary->test_accuracy, summary->best_validation_accuracy,
              summary->examples_per_second, summary->wall_seconds,
              static_cast<long long>(summary->steps), summary->epochs, settings->run_dir.c_str(),
              settings->name.c_str());
  return 0;
}
