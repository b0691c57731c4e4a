// actorps-predict: classes and probabilities of images (or texts) under a saved model.
#include "tools/model_tools.hpp"

#include "common/errc.hpp"
#include "common/json.hpp"
#include "common/log.hpp"
#include "compute/cpu_backend.hpp"
#include "saved_model/inference.hpp"
#include "tools/image_inputs.hpp"
#include "tools/tool_args.hpp"

#include <cstdint>
#include <cstdio>

namespace actorps {

int predict_main(int argc, char** argv) {
  const std::vector<tool_option> options = {
    {"top", "how many classes to list per image, most probable first", "1"},
    {"output", "table or jsonl (one JSON object per image)", "table"},
    {"input-format", "auto (by content), png, jpeg, idx or cifar10", "auto"},
    {"resize", "scale PNG and JPEG images of another size to the model's (bilinear) and convert their colours "
               "(grey, RGB) to its; without it they are refused", "no",
     true, "yes"},
    {"threads", "CPU threads", "1"},
  };
  const std::string usage = cat("actorps-predict MODEL INPUT... [options]\n", model_argument_help,
                                "\n  INPUT: PNG images (grey or RGB), IDX image files (raw or .gz), CIFAR-10 .bin files; "
                                "text files for a model trained on data.format = text (one example each)");
  tool_args args;
  if (auto done = begin_tool(argc, argv, options, usage, 2, SIZE_MAX, args))
    return *done;
  auto top = int_option(args, "top", 1, 1 << 20);
  auto threads = int_option(args, "threads", 1, 256);
  auto kind = parse_input_kind(args.get("input-format"));
  const auto& output = args.get("output");
  const auto& resize = args.get("resize");
  if (!top)
    return tool_failure(top.error(), 2);
  if (!threads)
    return tool_failure(threads.error(), 2);
  if (!kind)
    return tool_failure(caf::make_error(errc::invalid_config, cat("--input-format must be auto, png, jpeg, idx or cifar10, got \"",
                                                          args.get("input-format"), "\"")), 2);
  if (output != "table" && output != "jsonl")
    return tool_failure(caf::make_error(errc::invalid_config, cat("--output must be table or jsonl, got \"", output, "\"")), 2);
  if (resize != "yes" && resize != "no")
    return tool_failure(caf::make_error(errc::invalid_config, cat("--resize must be yes or no, got \"", resize, "\"")), 2);

  auto m = load_saved_model(args.positional[0]);
  if (!m)
    return tool_failure(m.error(), 1);
  const int classes = m->spec.classes();
  const int k = std::min(*top, classes);
  // Every input is loaded and checked before anything is printed: a bad file fails the run whole.
  // All images go through the model together (one network, full batches).
  struct origin {
    std::string path;
    int rows;
    bool labelled;
  };
  std::vector<origin> origins;
  dataset all;
  all.shape = m->spec.input;
  all.cols = static_cast<int>(all.shape.size());
  const bool text = !m->spec.layers.empty() && m->spec.layers.front().kind == layer_kind::embedding;
  for (size_t i = 1; i < args.positional.size(); ++i) {
    auto in = text ? load_text_input(args.positional[i], m->spec.input, m->scaling.bigrams)
                   : load_image_input(args.positional[i], *kind, m->scaling.source_for(m->spec.input), resize == "yes");
    if (!in)
      return tool_failure(in.error(), 1);
    if (!text)
      apply_scaling(in->images, m->scaling);
    origins.push_back({args.positional[i], in->images.rows, in->labelled});
    all.rows += in->images.rows;
    all.images.insert(all.images.end(), in->images.images.begin(), in->images.images.end());
    all.labels.insert(all.labels.end(), in->images.labels.begin(), in->images.labels.end());
  }
  auto be = make_cpu_backend(*threads);
  auto logits = model_logits(*m, all, *be);
  if (!logits)
    return tool_failure(logits.error(), 1);
  if (output == "table")
    std::printf("%-32s %7s %6s %-16s %11s%s\n", "input", "index", "class", "name", "probability", k > 1 ? "  top classes" : "");
  size_t row = 0;
  for (auto& [path, rows, labelled] : origins) {
    for (int r = 0; r < rows; ++r, ++row) {
      auto best = top_classes(softmax(logits->data() + row * static_cast<size_t>(classes), classes), k);
      if (output == "jsonl") {
        std::string list = "[";
        for (size_t j = 0; j < best.size(); ++j)
          list += cat(j > 0 ? ", " : "", "{\"class\": ", best[j].first, ", \"name\": ", json_quote(m->class_name(best[j].first)),
                      ", \"probability\": ", best[j].second, "}");
        json_object line;
        line.add("input", path).add("index", r).add("class", best[0].first).add("name", m->class_name(best[0].first))
          .add("probability", best[0].second);
        if (labelled)
          line.add("label", static_cast<int>(all.labels[row]));
        line.add_raw("top", list + "]");
        std::printf("%s\n", line.str().c_str());
      } else {
        std::string rest;
        for (size_t j = 1; j < best.size(); ++j)
          rest += cat("  ", m->class_name(best[j].first), ":", best[j].second);
        std::printf("%-32s %7d %6d %-16s %11.6f%s\n", path.c_str(), r, best[0].first, m->class_name(best[0].first).c_str(),
                    best[0].second, rest.c_str());
      }
    }
  }
  return 0;
}

} // namespace actorps
