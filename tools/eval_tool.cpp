// actorps-eval: a saved model on a labelled data set's test split and validation split.
#include "tools/model_tools.hpp"

#include "common/errc.hpp"
#include "common/file_io.hpp"
#include "common/json.hpp"
#include "common/log.hpp"
#include "compute/cpu_backend.hpp"
#include "data/data_source.hpp"
#include "saved_model/inference.hpp"
#include "tools/confusion_matrix.hpp"
#include "tools/run_data.hpp"
#include "tools/tool_args.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace actorps {

namespace {

caf::expected<confusion_matrix> score(const saved_model& m, dataset& set, const std::string& what, backend& be) {
  if (auto err = check_fits(m, set, what, true))
    return err;
  apply_scaling(set, m.scaling);
  auto logits = model_logits(m, set, be);
  if (!logits)
    return std::move(logits.error());
  confusion_matrix cm{m.spec.classes()};
  cm.add(logits->data(), set.labels.data(), set.rows);
  return cm;
}

// A heat map of the confusion matrix with gnuplot (counts in the cells).
// Axis labels: the classes' names where known, else their numbers.
std::string tics(const std::vector<std::string>& names, int n) {
  if (names.empty())
    return "1";
  std::string out = "(";
  for (int c = 0; c < n; ++c) {
    std::string name = static_cast<size_t>(c) < names.size() ? names[static_cast<size_t>(c)] : std::to_string(c);
    for (auto& ch : name)
      if (ch == '\'' || ch == '"')
        ch = ' ';
    out += cat(c > 0 ? ", " : "", "'", name, "' ", c);
  }
  return out + ")";
}

caf::error plot(const confusion_matrix& cm, const std::string& png, const std::string& title,
                const std::vector<std::string>& names) {
  auto data = png + ".dat.tmp";
  std::string rows;
  for (int c = 0; c < cm.classes(); ++c)
    for (int p = 0; p < cm.classes(); ++p)
      rows += cat(p, " ", c, " ", cm.count(c, p), "\n");
  if (auto err = write_file_synced(data, rows))
    return err;
  auto script = png + ".gp.tmp";
  const int n = cm.classes();
  std::string gp = cat("set terminal pngcairo size 760,680 noenhanced\n", "set output '", png, ".tmp'\n",
                       "set title '", title, "'\n", "set xlabel 'predicted class'\nset ylabel 'true class'\n",
                       "set xrange [-0.5:", n - 0.5, "]\nset yrange [", n - 0.5, ":-0.5]\n",
                       "set xtics ", tics(names, n), names.empty() ? "" : " rotate by 45 right", "\nset ytics ", tics(names, n),
                       "\nset palette defined (0 'white', 1 '#1f4e9c')\n",
                       "plot '", data, "' using 1:2:3 with image notitle, '", data,
                       "' using 1:2:(sprintf('%d', $3)) with labels font ',9' notitle\n");
  if (auto err = write_file_synced(script, gp))
    return err;
  int rc = std::system(cat("gnuplot '", script, "' 2>", png, ".err.tmp").c_str());
  auto why = read_whole_file(png + ".err.tmp");
  std::remove(data.c_str());
  std::remove(script.c_str());
  std::remove((png + ".err.tmp").c_str());
  if (rc != 0) {
    std::remove((png + ".tmp").c_str());
    return caf::make_error(errc::file_error, cat(png, ": gnuplot failed (exit ", rc, "): ", why ? *why : ""));
  }
  if (std::rename((png + ".tmp").c_str(), png.c_str()) != 0) // never a half-drawn PNG under the name
    return caf::make_error(errc::file_error, cat(png, ": cannot rename into place"));
  return caf::none;
}

} // namespace

int eval_main(int argc, char** argv) {
  const std::vector<tool_option> options = {
    {"data.dir", "MNIST-format IDX or CIFAR-10 files, class folders (train/<class>/, test/<class>/) or an .npz "
                 "(default: the run's, from its summary.json, else Fashion-MNIST)",
     "/usr/share/datasets/fashion-mnist"},
    {"data.format", "auto, idx, cifar10, npz, image-folder (scaled to the model's input) or text (hashed as the model's "
                    "training did)", "auto"},
    {"data.validation-size", "training examples held out for validation, as in training (0: 1/12)", "0"},
    {"set", "test, validation or both", "both"},
    {"out", "the JSON report", "eval.json"},
    {"plot", "also draw the test confusion matrix with gnuplot (--plot=FILE.png; --plot: OUT with .png)", "", true,
     "(out).png"},
    {"threads", "CPU threads", "1"},
  };
  const std::string usage = cat("actorps-eval MODEL [options]\n", model_argument_help);
  tool_args args;
  if (auto done = begin_tool(argc, argv, options, usage, 1, 1, args))
    return *done;
  data_settings ds;
  ds.dir = args.get("data.dir");
  auto format = parse_data_format(args.get("data.format"));
  if (!format)
    return tool_failure(caf::make_error(errc::invalid_config, cat("--data.format must be auto, idx, cifar10, npz, "
                                                                  "image-folder or text, got \"", args.get("data.format"), "\"")), 2);
  ds.format = *format;
  auto validation_size = int_option(args, "data.validation-size", 0, 1 << 30);
  auto threads = int_option(args, "threads", 1, 256);
  if (!validation_size)
    return tool_failure(validation_size.error(), 2);
  if (!threads)
    return tool_failure(threads.error(), 2);
  ds.validation_size = *validation_size;
  const auto& which = args.get("set");
  if (which != "test" && which != "validation" && which != "both")
    return tool_failure(caf::make_error(errc::invalid_config, cat("--set must be test, validation or both, got \"", which,
                                                          "\"")), 2);
  std::string out = args.get("out");
  std::string png = args.get("plot");
  if (png == "(out).png")
    png = std::filesystem::path{out}.replace_extension(".png").string();
  if (!png.empty() && which == "validation")
    return tool_failure(caf::make_error(errc::invalid_config, "--plot draws the test set's matrix: use --set=test or both"), 2);

  auto m = load_saved_model(args.positional[0]);
  if (!m)
    return tool_failure(m.error(), 1);
  std::string whose; // (the run's data set unless the command line names one)
  if (auto run = recorded_data(args.positional[0]); run && !args.was_given("data.dir")) {
    ds.dir = run->dir;
    if (!args.was_given("data.format"))
      ds.format = run->format;
    if (!args.was_given("data.validation-size"))
      ds.validation_size = run->validation_size;
    whose = " (the run's data set; --data.dir reads another)";
  }
  ds.images.color = m->spec.input.channels == 1 ? color_mode::grey : color_mode::rgb; // (image folders: as the model takes)
  ds.images.resize = m->spec.input;
  ds.text.max_tokens = static_cast<int>(m->spec.input.size()); // (text: the model's slots, its tokens)
  ds.text.bigrams = m->scaling.bigrams;
  auto data = load_data(ds); // unscaled: the model's own scaling is applied below
  if (!data)
    return tool_failure(data.error(), 1);
  if (auto err = check_same_classes(m->class_names, m->source, data->class_names, ds.dir))
    return tool_failure(err, 1);
  auto be = make_cpu_backend(*threads);
  std::printf("model %s (step %lld): %s\ndata %s%s\n", m->source.c_str(), static_cast<long long>(m->step),
              m->spec.text().c_str(), ds.dir.c_str(), whose.c_str());
  json_object report;
  // the classes' names: the model's, else the data's
  const auto names = !m->class_names.empty() ? m->class_names : data->class_names;
  report.add("model", m->source).add("model_text", m->spec.text()).add("step", m->step).add("data", ds.dir)
    .add_raw("class_names", json_array(names));
  std::optional<confusion_matrix> test_cm;
  for (const char* set : {"test", "validation"}) {
    if (which != "both" && which != set)
      continue;
    dataset& d = std::string{set} == "test" ? data->test : data->validation;
    auto cm = score(*m, d, cat(ds.dir, " (", set, " set)"), *be);
    if (!cm)
      return tool_failure(cm.error(), 1);
    std::printf("\n%s set: %lld examples, loss %.4f, accuracy %.2f%%\n%s", set, static_cast<long long>(cm->examples()),
                cm->loss(), 100.0 * cm->accuracy(), cm->table(names).c_str());
    report.add_raw(set, cm->json());
    if (std::string{set} == "test")
      test_cm = std::move(*cm);
  }
  if (auto err = write_file_atomically(out, report.str() + "\n"))
    return tool_failure(err, 1);
  std::printf("\nreport: %s\n", out.c_str());
  if (!png.empty()) {
    if (auto err = plot(*test_cm, png, cat("confusion matrix, test set: ", m->source), names))
      return tool_failure(err, 1);
    std::printf("plot: %s\n", png.c_str());
  }
  return 0;
}

} // namespace actorps
