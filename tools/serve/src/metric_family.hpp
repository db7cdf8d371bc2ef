#pragma once
// One Prometheus metric family being written: HELP and TYPE once, then its samples. Private to
// /metrics (metrics.cpp, kafka_metrics.cpp).
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace weir::serve {

class Family {
 public:
  Family(std::string& out, std::string_view name, std::string_view type, std::string_view help) : out_(&out), name_(name) {
    *out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(std::string_view labels, double value, std::string_view suffix = {}) {
    *out_ += fmt::format("{}{}{}{}{} {}\n", name_, suffix, labels.empty() ? "" : "{", labels, labels.empty() ? "" : "}",
                         format_value(value));
  }
  void sample(std::string_view labels, std::uint64_t value, std::string_view suffix = {}) {
    *out_ += fmt::format("{}{}{}{}{} {}\n", name_, suffix, labels.empty() ? "" : "{", labels, labels.empty() ? "" : "}",
                         value);
  }

 private:
  static std::string format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    return fmt::format("{}", v);
  }
  std::string* out_;
  std::string_view name_;
};

}  // namespace weir::serve
