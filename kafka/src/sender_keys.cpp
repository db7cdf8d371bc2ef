// Keys as f144 messages, each change once.
#include "sender_keys.hpp"

#include <fnmatch.h>

#include <cstring>

#include <fmt/format.h>

#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"

namespace weir::kafka {

KeyForwarder::KeyForwarder(const core::Arena& arena, std::vector<std::string> patterns, std::string own_prefix)
    : kv_(arena), patterns_(std::move(patterns)), own_prefix_(std::move(own_prefix)), value_(kv_.value_bytes()) {}

std::uint64_t KeyForwarder::scan(const Produce& produce) {
  if (patterns_.empty()) return 0;
  std::uint64_t handed = 0;
  kv_.for_each_key([&](std::string_view key, const core::ValueInfo& listed) {
    if (key.starts_with(own_prefix_)) return;
    const std::string name(key);
    bool match = false;
    for (const std::string& p : patterns_) match = match || fnmatch(p.c_str(), name.c_str(), 0) == 0;
    if (!match) return;
    auto it = seen_.find(name);
    if (it != seen_.end() && it->second == listed.epoch) return;
    core::ValueInfo info;
    if (kv_.get(key, value_, info) != core::KvStatus::ok) return;  // busy or gone: the next scan
    std::span<const std::byte> message;
    if (!encode(key, info, message)) {
      ++skipped_;
      seen_[name] = info.epoch;
      return;
    }
    if (!produce(key, message)) return;
    ++sent_;
    ++handed;
    seen_[name] = info.epoch;
  });
  return handed;
}

bool KeyForwarder::encode(std::string_view key, const core::ValueInfo& info, std::span<const std::byte>& out) {
  LogValue v;
  v.source = key;
  v.timestamp_ns = core::realtime_ns();
  v.type = info.type;
  switch (info.type) {
    case core::ValueType::i64:
    case core::ValueType::u64:
    case core::ValueType::f64:
      if (info.length != sizeof v.bits) return false;
      std::memcpy(&v.bits, value_.data(), sizeof v.bits);
      break;
    case core::ValueType::array:
      v.elem = info.array.elem;
      v.elements = static_cast<std::uint32_t>(info.array.elements());
      v.array = std::span<const std::byte>(value_.data(), info.length);
      break;
    default:
      return false;
  }
  auto message = encoder_.encode(v);
  if (!message) return false;
  out = *message;
  return true;
}

}  // namespace weir::kafka
