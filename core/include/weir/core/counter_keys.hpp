#pragma once
// A long-running part's counters as arena keys PREFIX.FIELD (the bridge's bridge.NAME.*, a Kafka
// client's kafka.NAME.*), so `weir keys`, `weir get` and the web page show them, with a `link` text
// key for its state. Key names are built once; publish() writes them (no allocation).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weir/core/kv_store.hpp"

namespace weir::core {

class CounterKeys {
 public:
  /// Keys PREFIX.FIELD and PREFIX.link; `prefix` ends with its dot ("bridge.daq1.").
  CounterKeys(const Arena& arena, std::string prefix)
      : kv_(arena), prefix_(std::move(prefix)), link_key_(prefix_ + "link") {}
  /// Adds a u64 field; returns its index for set(). Cold path.
  std::size_t add(std::string_view field) {
    names_.push_back(prefix_ + std::string(field));
    values_.push_back(0);
    return names_.size() - 1;
  }
  void set(std::size_t field, std::uint64_t value) noexcept { values_[field] = value; }
  /// Writes every field, and `link` as text. A failed write (a full arena) is left for the next.
  void publish(std::string_view link) noexcept {
    for (std::size_t i = 0; i < names_.size(); ++i) (void)kv_.set_u64(names_[i], values_[i]);
    if (link != last_link_) {
      if (kv_.set_text(link_key_, link) == KvStatus::ok) last_link_ = link;
    }
  }
  [[nodiscard]] const std::string& prefix() const noexcept { return prefix_; }
  [[nodiscard]] KvStore& kv() noexcept { return kv_; }

 private:
  KvStore kv_;
  std::string prefix_;
  std::string link_key_;
  std::vector<std::string> names_;
  std::vector<std::uint64_t> values_;
  std::string last_link_;  // a copy: callers pass formatted text ("connected 3/4") as well as literals
};

}  // namespace weir::core
