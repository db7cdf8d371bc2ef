#pragma once
// The IOC database of weir-epics serve: the record text written from the PVs, the access security
// that makes read-only PVs refuse puts, and the start of the IOC (dbLoadDatabase of the embedded
// definition, its registration, dbLoadRecords, iocInit). Private to epics/ioc.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ioc_pv.hpp"
#include "weir/core/error.hpp"

namespace weir::epics::detail {

/// The .db text of `pvs`: one record each, DTYP "weir"; inputs "I/O Intr" with TSE -2. Pure.
[[nodiscard]] std::string database_text(const std::vector<std::unique_ptr<Pv>>& pvs);

/// The access security file: DEFAULT writable, READONLY (every read-only PV) readable only. Pure.
[[nodiscard]] std::string access_security_text();

/// Sets `env` (EPICS_CA_SERVER_PORT, ...) with epicsEnvSet, loads the definition (with pvAccess when
/// `pva` and the base has it), the records and the access security, and runs iocInit. Once per process.
/// `max_array_bytes` raises EPICS_CA_MAX_ARRAY_BYTES to fit the largest waveform. Thread: the server's.
[[nodiscard]] core::Result<void> start_ioc(const std::vector<std::unique_ptr<Pv>>& pvs,
                                           const std::map<std::string, std::string>& env, bool pva,
                                           std::uint64_t max_array_bytes);

/// Whether this build serves pvAccess (EPICS base with QSRV).
[[nodiscard]] bool pva_built() noexcept;

}  // namespace weir::epics::detail
