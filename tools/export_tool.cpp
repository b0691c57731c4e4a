// actorps-export: a saved model (checkpoint, run or model directory, .npz) to an .npz for NumPy or
// to a one-file-per-shard checkpoint directory.
#include "tools/model_tools.hpp"

#include "checkpoint/checkpoint_store.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "saved_model/saved_model.hpp"
#include "tools/tool_args.hpp"

#include <cstdio>

namespace actorps {

int export_main(int argc, char** argv) {
  const std::vector<tool_option> options = {
    {"format", "npz (NumPy: one float32 array per variable plus model.json) or checkpoint (a checkpoint "
               "directory, e.g. from an .npz)", "npz"},
  };
  const char* usage = "actorps-export MODEL OUT [--format=npz|checkpoint]\n"
                      "  MODEL: a checkpoint directory, a run directory (runs/NAME: its best model), a model\n"
                      "         directory (runs/NAME/model) or an .npz written by actorps-export";
  auto args = parse_tool_args(argc, argv, options);
  if (!args) {
    std::fprintf(stderr, "error: %s\n", describe(args.error()).c_str());
    return 2;
  }
  if (args->help) {
    std::printf("%s", tool_usage(usage, options).c_str());
    return 0;
  }
  if (args->positional.size() != 2) {
    std::fprintf(stderr, "error: expected MODEL and OUT, got %zu arguments\n%s", args->positional.size(),
                 tool_usage(usage, options).c_str());
    return 2;
  }
  const auto& format = args->get("format");
  if (format != "npz" && format != "checkpoint") {
    std::fprintf(stderr, "error: --format must be npz or checkpoint, got \"%s\"\n", format.c_str());
    return 2;
  }
  auto m = load_saved_model(args->positional[0]);
  if (!m) {
    std::fprintf(stderr, "error: %s\n", describe(m.error()).c_str());
    return 1;
  }
  const auto& out = args->positional[1];
  auto err = format == "npz" ? export_npz(*m, out) : write_checkpoint(to_checkpoint(*m), out);
  if (err) {
    std::fprintf(stderr, "error: %s\n", describe(err).c_str());
    return 1;
  }
  size_t parameters = 0;
  for (auto& v : m->values)
    parameters += v.size();
  std::printf("exported %zu variables (%zu parameters) of \"%s\" from %s to %s (weights digest %s)\n",
              m->values.size(), parameters, m->spec.text().c_str(), m->source.c_str(), out.c_str(),
              weights_digest(m->values).c_str());
  return 0;
}

} // namespace actorps
