#include "run_audit.hpp"

#include <fmt/format.h>

#include "weir/h5/recording_format.hpp"
#include "weir/ledger/audit.hpp"

namespace weir::supervisor {

LedgerTotals audit_recorders(const RunLedger& ledger, const std::string& arena_name,
                             const std::function<void(const std::string&)>& log) {
  static_assert(ledger::kReasonCount == h5::kGapReasonCount);
  LedgerTotals totals;
  for (const RecorderTarget& t : ledger.targets()) {
    ledger::AuditOptions options;
    options.run = ledger.run(t);
    if (t.is_dir) options.arena = arena_name;
    const std::filesystem::path where = t.is_dir ? t.dir : t.dir / (t.prefix + ".h5");
    auto audit = ledger::audit_run(where, options);
    if (!audit) {
      log(fmt::format("  ledger of record \"{}\" run {}: cannot audit it: {}", t.part, options.run, audit.error().what));
      totals.problems.push_back(fmt::format("record \"{}\": its run {} could not be audited", t.part, options.run));
      continue;
    }
    log(fmt::format("  ledger of record \"{}\" run {} ({} file(s) in {}):", t.part, audit->run, audit->files.size(),
                    t.dir.string()));
    std::uint64_t unaccounted = 0, duplicates = 0, disk_error = 0;
    for (const ledger::ChannelLedger& c : audit->channels) {
      std::string gaps;
      for (std::size_t i = 0; i < ledger::kReasonCount; ++i)
        if (c.gaps[i] != 0)
          gaps += fmt::format("{}{} {}", gaps.empty() ? "" : ", ", h5::kGapReasonNames[i], c.gaps[i]);
      const std::uint64_t lost = ledger::lost_blocks(c);
      log(fmt::format("    channel {:<20} written {} recorded {} lost {} (gaps: {}) unaccounted {} duplicated {}",
                      c.channel, c.written, c.recorded, lost, gaps.empty() ? "none" : gaps, c.unaccounted,
                      c.duplicates));
      totals.written += c.written;
      totals.recorded += c.recorded;
      totals.lost += lost;
      disk_error += c.gaps[static_cast<std::size_t>(h5::GapReason::disk_error)];
      unaccounted += c.unaccounted;
      duplicates += c.duplicates;
    }
    for (const ledger::FileState& f : audit->files)
      if (f.state != "closed")
        log(fmt::format("    file {}: {}{}", f.path.filename().string(), f.state, f.error.empty() ? "" : ": " + f.error));
    totals.unaccounted += unaccounted;
    totals.duplicates += duplicates;
    totals.disk_error += disk_error;
    // A disk that failed under a recorder is a failed run even when a restart recorded the rest:
    // the lab must look at it, and a service manager must see it.
    if (disk_error != 0)
      totals.problems.push_back(fmt::format("record \"{}\": run {} lost {} block(s) to disk errors", t.part,
                                            audit->run, disk_error));
    for (const ledger::FileState& f : audit->files)
      if (f.state == "unreadable")
        totals.problems.push_back(fmt::format("record \"{}\": {} cannot be read: {}", t.part, f.path.string(), f.error));
    if (unaccounted != 0 || duplicates != 0)
      totals.problems.push_back(fmt::format("record \"{}\": run {} does not balance: {} block(s) unaccounted, {} duplicated",
                                            t.part, audit->run, unaccounted, duplicates));
  }
  return totals;
}

}  // namespace weir::supervisor
