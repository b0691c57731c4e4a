// Gauges, counters and the text exposition format.
#include "observe/metric_registry.hpp"

#include "observe/metric_catalog.hpp"

#include <cmath>
#include <cstdio>

namespace actorps {

namespace {

std::string escaped(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string label(const std::pair<std::string, std::string>& kv) {
  return kv.first.empty() ? std::string{} : kv.first + "=\"" + escaped(kv.second) + "\"";
}

std::string number(double v) {
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

} // namespace

metric_registry::metric_registry(std::map<std::string, std::string> labels) {
  for (auto& kv : labels)
    base_labels_ += (base_labels_.empty() ? "" : ",") + label(kv);
}

void metric_registry::update(const std::string& name, type kind, double v, bool add,
                             const std::pair<std::string, std::string>& extra) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto& f = families_[name];
  f.kind = kind;
  auto& sample = f.samples[label(extra)];
  sample = add ? sample + v : v;
}

void metric_registry::set(const std::string& name, double value, std::pair<std::string, std::string> extra) {
  update(name, type::gauge, value, false, extra);
}

void metric_registry::add(const std::string& name, double delta, std::pair<std::string, std::string> extra) {
  update(name, type::counter, delta, true, extra);
}

double metric_registry::value(const std::string& name, std::pair<std::string, std::string> extra) const {
  std::lock_guard<std::mutex> guard{mtx_};
  auto f = families_.find(name);
  if (f == families_.end())
    return 0.0;
  auto s = f->second.samples.find(label(extra));
  return s == f->second.samples.end() ? 0.0 : s->second;
}

std::string metric_registry::exposition() const {
  return exposition_of({this});
}

std::string metric_registry::exposition_of(const std::vector<const metric_registry*>& all) {
  struct family_text {
    type kind = type::gauge;
    std::string samples;
  };
  std::map<std::string, family_text> merged;
  for (auto* r : all) {
    std::lock_guard<std::mutex> guard{r->mtx_};
    for (auto& [name, f] : r->families_) {
      auto& out = merged[name];
      out.kind = f.kind;
      for (auto& [extra, v] : f.samples) {
        std::string labels = r->base_labels_;
        if (!extra.empty())
          labels += (labels.empty() ? "" : ",") + extra;
        out.samples += name + (labels.empty() ? "" : "{" + labels + "}") + " " + number(v) + "\n";
      }
    }
  }
  std::string out;
  for (auto& [name, f] : merged)
    out += "# HELP " + name + " " + metric_help(name) + "\n# TYPE " + name + (f.kind == type::counter ? " counter\n" : " gauge\n") + f.samples;
  return out;
}

} // namespace actorps
