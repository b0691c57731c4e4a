// actorps-export: a saved model (checkpoint, run or model directory, .npz) to an .npz for NumPy or
// to a one-file-per-shard checkpoint directory.
#include "tools/model_tools.hpp"

#include "checkpoint/checkpoint_store.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "saved_model/saved_model.hpp"
#include "tools/tool_args.hpp"

#include <cstdio>
#include <cstdlib>

namespace actorps {

int export_main(int argc, char** argv) {
  const std::vector<tool_option> options = {
    {"format", "npz (NumPy: one float32 array per variable plus model.json) or checkpoint (a checkpoint "
               "directory, e.g. from an .npz)", "npz"},
    {"table-parts", "npz: an embedding table as this many arrays <name>/part_J, the rows a cluster of that "
                    "many ps nodes holds (1: one array)", "1"},
    {"table-partition", "with --table-parts: div (consecutive rows) or mod (rows r with r mod parts = J)", "div"},
  };
  const std::string usage = cat("actorps-export MODEL OUT [--format=npz|checkpoint] [--table-parts=N] "
                                "[--table-partition=div|mod]\n", model_argument_help);
  tool_args args;
  if (auto done = begin_tool(argc, argv, options, usage, 2, 2, args))
    return *done;
  const auto& format = args.get("format");
  if (format != "npz" && format != "checkpoint")
    return tool_failure(caf::make_error(errc::invalid_config, cat("--format must be npz or checkpoint, got \"", format,
                                                                  "\"")), 2);
  table_export tables;
  const auto& parts = args.get("table-parts");
  char* end = nullptr;
  const unsigned long n = std::strtoul(parts.c_str(), &end, 10);
  if (parts.empty() || *end != '\0' || n == 0 || n > 65536)
    return tool_failure(caf::make_error(errc::invalid_config, cat("--table-parts must be a count from 1 to 65536, got \"",
                                                                  parts, "\"")), 2);
  tables.parts = static_cast<uint32_t>(n);
  const auto& strategy = args.get("table-partition");
  if (strategy != "div" && strategy != "mod")
    return tool_failure(caf::make_error(errc::invalid_config, cat("--table-partition must be div or mod, got \"",
                                                                  strategy, "\"")), 2);
  tables.mod = strategy == "mod";
  if (tables.parts > 1 && format != "npz")
    return tool_failure(caf::make_error(errc::invalid_config, "--table-parts is for --format=npz"), 2);
  auto m = load_saved_model(args.positional[0]);
  if (!m)
    return tool_failure(m.error(), 1);
  const auto& out = args.positional[1];
  auto err = format == "npz" ? export_npz(*m, out, tables) : write_checkpoint(to_checkpoint(*m), out);
  if (err)
    return tool_failure(err, 1);
  size_t parameters = 0;
  for (auto& v : m->values)
    parameters += v.size();
  std::printf("exported %zu variables (%zu parameters) of \"%s\" from %s to %s (weights digest %s)\n",
              m->values.size(), parameters, m->spec.text().c_str(), m->source.c_str(), out.c_str(),
              weights_digest(m->values).c_str());
  return 0;
}

} // namespace actorps
