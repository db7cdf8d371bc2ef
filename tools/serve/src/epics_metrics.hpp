#pragma once
// The EPICS drivers' counters in /metrics: the PART.* keys a driver "epics" keeps (found by their
// `pvs_connected` key), as weir_epics_* families labelled by the part's name.
#include <string>

#include "weir/core/kv_store.hpp"

namespace weir::serve {

/// Appends the weir_epics_* families for every EPICS driver that left keys in `kv`; nothing when
/// there is none. Thread: any.
void append_epics_metrics(std::string& out, const core::KvStore& kv);

}  // namespace weir::serve
