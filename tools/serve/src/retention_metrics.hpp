#pragma once
// The recorders' retention counters in /metrics: the PART.retention_* keys a recorder with `keep` keeps
// (found by their `retention_deleted_files` key), as weir_retention_* families labelled by the part's name.
#include <string>

#include "weir/core/kv_store.hpp"

namespace weir::serve {

/// Appends the weir_retention_* families for every recorder that left retention keys in `kv`; nothing
/// when there is none. Thread: any.
void append_retention_metrics(std::string& out, const core::KvStore& kv);

}  // namespace weir::serve
