// f144 values into arena keys.
#include "receiver_keys.hpp"

#include <fnmatch.h>

#include <bit>

namespace weir::kafka {

KeyReceiver::KeyReceiver(const core::Arena& arena, std::vector<std::string> patterns, std::string own_prefix)
    : kv_(arena), patterns_(std::move(patterns)), own_prefix_(std::move(own_prefix)) {}

bool KeyReceiver::matches(std::string_view source) {
  if (auto it = matched_.find(source); it != matched_.end()) return it->second;
  const std::string name(source);
  bool match = false;
  if (!source.starts_with(own_prefix_))
    for (const std::string& p : patterns_) match = match || fnmatch(p.c_str(), name.c_str(), 0) == 0;
  matched_.emplace(name, match);
  return match;
}

KeyTaken KeyReceiver::take(const LogValue& v) {
  if (patterns_.empty() || !matches(v.source)) return KeyTaken::not_matched;
  core::KvStatus st = core::KvStatus::type_mismatch;
  std::size_t kind = 0;
  switch (v.type) {
    case core::ValueType::i64: st = kv_.set_i64(v.source, static_cast<std::int64_t>(v.bits)); kind = 0; break;
    case core::ValueType::u64: st = kv_.set_u64(v.source, v.bits); kind = 1; break;
    case core::ValueType::f64: st = kv_.set_f64(v.source, std::bit_cast<double>(v.bits)); kind = 2; break;
    case core::ValueType::array: {
      core::ArrayShape shape;
      shape.elem = v.elem;
      shape.rank = 1;
      shape.dims = {v.elements, 0};
      st = kv_.set_array(v.source, shape, v.array);
      kind = 3;
      break;
    }
    case core::ValueType::none:
    case core::ValueType::bytes:
    case core::ValueType::text:
    case core::ValueType::vector: break;  // decode_f144 gives none of these
  }
  if (st != core::KvStatus::ok) {
    ++failed_;
    return KeyTaken::failed;
  }
  ++set_[kind];
  return KeyTaken::set;
}

}  // namespace weir::kafka
