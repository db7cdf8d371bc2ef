// epics "serve", client puts: a writable key's new value written to the key-value store, and the next
// run's metadata (RunTitle, RunOperator, RunSample) checked and kept for its start; each put counted
// for the report. Thread: the database's, record locked. Run-control puts: ioc_runs.cpp.
#include <cmath>
#include <mutex>
#include <string>
#include <string_view>

#include "ioc_server_impl.hpp"

namespace weir::epics::detail {

bool Server::counted(bool ok) noexcept {
  (ok ? puts_ : refused_).fetch_add(1, std::memory_order_relaxed);  // relaxed: counters for the report
  return ok;
}

bool Server::put_f64(Pv& pv, double v) noexcept {
  if (pv.role != Role::key_out || pv.index >= keys_.size() || !std::isfinite(v)) return counted(false);
  const KeyRow& row = keys_[pv.index];
  core::KvStatus s = core::KvStatus::type_mismatch;
  switch (row.type) {
    case core::ValueType::i64: s = kv_.set_i64(row.opt->key, std::llround(v)); break;
    case core::ValueType::u64: s = v < 0 ? core::KvStatus::type_mismatch : kv_.set_u64(row.opt->key, static_cast<std::uint64_t>(std::llround(v))); break;
    case core::ValueType::none:
    case core::ValueType::f64: s = kv_.set_f64(row.opt->key, v); break;
    case core::ValueType::bytes:
    case core::ValueType::text:
    case core::ValueType::vector:
    case core::ValueType::array: break;
  }
  return counted(s == core::KvStatus::ok);
}

bool Server::put_i64(Pv& pv, std::int64_t v) noexcept {
  if (pv.role != Role::key_out || pv.index >= keys_.size()) return counted(false);
  const KeyRow& row = keys_[pv.index];
  core::KvStatus s = core::KvStatus::type_mismatch;
  if (row.type == core::ValueType::u64) s = v < 0 ? core::KvStatus::type_mismatch : kv_.set_u64(row.opt->key, static_cast<std::uint64_t>(v));
  else if (row.type == core::ValueType::i64) s = kv_.set_i64(row.opt->key, v);
  return counted(s == core::KvStatus::ok);
}

bool Server::put_text(Pv& pv, std::string_view v) noexcept {
  if (pv.role == Role::key_out && pv.index < keys_.size())
    return counted(kv_.set_text(keys_[pv.index].opt->key, v) == core::KvStatus::ok);
  if (pv.role != Role::run_title && pv.role != Role::run_operator && pv.role != Role::run_sample) return counted(false);
  try {  // a put of a run's metadata: checked as a start would check it
    core::RunMeta one;
    std::string& field = pv.role == Role::run_title ? one.title : pv.role == Role::run_operator ? one.operator_name : one.sample;
    field.assign(v);
    if (!core::check_run_meta(one)) return counted(false);
    const std::lock_guard lock(meta_m_);
    (pv.role == Role::run_title ? next_meta_.title : pv.role == Role::run_operator ? next_meta_.operator_name : next_meta_.sample) = field;
  } catch (...) {  // std::bad_alloc: refuse the put
    return counted(false);
  }
  return counted(true);
}

}  // namespace weir::epics::detail
