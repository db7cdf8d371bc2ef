#pragma once
// The end of a run's summary: each recorder's run audited from its files and run record
// (weir::ledger::audit_run), so "lost" counts every block of every restart the files do not hold.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "run_ledger.hpp"

namespace weir::supervisor {

struct LedgerTotals {
  std::uint64_t written = 0, recorded = 0, lost = 0, disk_error = 0, unaccounted = 0, duplicates = 0;
  std::vector<std::string> problems;  // recorders whose run does not balance, or could not be audited
};

/// Audits the run of every recorder and logs, per channel: written, recorded, gaps by reason,
/// unaccounted and duplicated. Thread: main (HDF5), once the recorders have stopped.
[[nodiscard]] LedgerTotals audit_recorders(const RunLedger& ledger, const std::string& arena_name,
                                           const std::function<void(const std::string&)>& log);

}  // namespace weir::supervisor
