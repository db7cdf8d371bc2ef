#pragma once
// The recorders' closed-file counters in /metrics: the PART.* keys a recorder with on_close keeps (found by their
// `handoff_ok` key), as weir_handoff_* and weir_files_hashed_* families labelled by the part's name.
#include <string>

#include "weir/core/kv_store.hpp"

namespace weir::serve {

/// Appends the weir_handoff_* and weir_files_hashed_* families for every recorder that left hand-off keys in `kv`; nothing when
/// there is none. Thread: any.
void append_handoff_metrics(std::string& out, const core::KvStore& kv);

}  // namespace weir::serve
