#include "ioc_database.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <asDbLib.h>
#include <callback.h>
#include <dbAccess.h>
#include <dbStaticLib.h>
#include <envDefs.h>
#include <iocInit.h>
#include <fmt/format.h>

extern "C" {
int weir_ioc_ca_registerRecordDeviceDriver(struct dbBase* pbase);
#if WEIR_IOC_PVA
int weir_ioc_registerRecordDeviceDriver(struct dbBase* pbase);
#endif
}

namespace weir::epics::detail {

extern const char* const weir_ioc_ca_dbd_parts[];
#if WEIR_IOC_PVA
extern const char* const weir_ioc_dbd_parts[];
#endif

namespace {

constexpr std::size_t kDescBytes = 40;   // DESC holds 40 characters
constexpr std::size_t kEguBytes = 15;    // EGU holds 15
constexpr std::size_t kStateBytes = 25;  // ZNAM, ONAM, ZRST, ... hold 25
constexpr int kCallbackQueueFloor = 2000;      // EPICS's default queue size
constexpr std::uint64_t kArrayBytesSlack = 4096;  // CA's headers beside the largest array
constexpr std::array<std::string_view, 16> kMbbStates{"ZR", "ON", "TW", "TH", "FR", "FV", "SX", "SV",
                                                      "EI", "NI", "TE", "EL", "TV", "TT", "FT", "FF"};

// A .db string: quotes and backslashes escaped, cut to `limit` bytes, control characters dropped.
std::string db_quoted(std::string_view text, std::size_t limit = 0) {
  if (limit != 0 && text.size() > limit) text = text.substr(0, limit);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  out += '"';
  return out;
}

std::string_view type_name(RecKind kind) {
  switch (kind) {
    case RecKind::ai: return "ai";
    case RecKind::bi: return "bi";
    case RecKind::mbbi: return "mbbi";
    case RecKind::int64in: return "int64in";
    case RecKind::lsi: return "lsi";
    case RecKind::waveform: return "waveform";
    case RecKind::ao: return "ao";
    case RecKind::bo: return "bo";
    case RecKind::int64out: return "int64out";
    case RecKind::lso: return "lso";
  }
  return "ai";
}

bool is_input(RecKind kind) {
  switch (kind) {
    case RecKind::ai:
    case RecKind::bi:
    case RecKind::mbbi:
    case RecKind::int64in:
    case RecKind::lsi:
    case RecKind::waveform: return true;
    case RecKind::ao:
    case RecKind::bo:
    case RecKind::int64out:
    case RecKind::lso: return false;
  }
  return true;
}

void field(std::string& out, std::string_view name, std::string_view value_quoted) {
  out += fmt::format("  field({}, {})\n", name, value_quoted);
}

std::string record_text(const Pv& pv) {
  const PvFields& f = pv.fields;
  std::string out = fmt::format("record({}, {}) {{\n", type_name(pv.kind), db_quoted(pv.name));
  field(out, "DTYP", "\"weir\"");
  if (!f.desc.empty()) field(out, "DESC", db_quoted(f.desc, kDescBytes));
  if (is_input(pv.kind)) {
    field(out, "INP", db_quoted("@" + pv.name));
    field(out, "SCAN", "\"I/O Intr\"");
    field(out, "TSE", "\"-2\"");
  } else {
    field(out, "OUT", db_quoted("@" + pv.name));
  }
  if (f.read_only) {
    field(out, "ASG", "\"READONLY\"");
    field(out, "DISP", "\"1\"");
  }
  const bool numeric = pv.kind == RecKind::ai || pv.kind == RecKind::ao || pv.kind == RecKind::int64in ||
                       pv.kind == RecKind::int64out || pv.kind == RecKind::waveform;
  if (numeric && !f.egu.empty()) field(out, "EGU", db_quoted(f.egu, kEguBytes));
  if (numeric && f.prec >= 0 && pv.kind != RecKind::int64in && pv.kind != RecKind::int64out)
    field(out, "PREC", db_quoted(std::to_string(f.prec)));
  if (numeric && (f.low != 0 || f.high != 0)) {
    field(out, "LOPR", db_quoted(fmt::format("{}", f.low)));
    field(out, "HOPR", db_quoted(fmt::format("{}", f.high)));
    if (pv.kind == RecKind::ao || pv.kind == RecKind::int64out) {
      field(out, "DRVL", db_quoted(fmt::format("{}", f.low)));
      field(out, "DRVH", db_quoted(fmt::format("{}", f.high)));
    }
  }
  switch (pv.kind) {
    case RecKind::waveform:
      field(out, "FTVL", "\"DOUBLE\"");
      field(out, "NELM", db_quoted(std::to_string(std::max<std::uint32_t>(f.elements, 1))));
      break;
    case RecKind::lsi:
    case RecKind::lso: field(out, "SIZV", db_quoted(std::to_string(std::clamp<std::uint32_t>(f.elements, 2, 65535)))); break;
    case RecKind::bi:
    case RecKind::bo:
      if (f.states.size() >= 2) {
        field(out, "ZNAM", db_quoted(f.states[0], kStateBytes));
        field(out, "ONAM", db_quoted(f.states[1], kStateBytes));
      }
      break;
    case RecKind::mbbi:
      for (std::size_t i = 0; i < std::min(f.states.size(), kMbbStates.size()); ++i) {
        field(out, fmt::format("{}ST", kMbbStates[i]), db_quoted(f.states[i], kStateBytes));
        field(out, fmt::format("{}VL", kMbbStates[i]), db_quoted(std::to_string(i)));
      }
      break;
    case RecKind::ai:
    case RecKind::int64in:
    case RecKind::ao:
    case RecKind::int64out: break;
  }
  out += "}\n";
  return out;
}

core::Result<std::filesystem::path> write_file(const std::filesystem::path& dir, const char* name, std::string_view text) {
  const std::filesystem::path path = dir / name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  f.close();
  if (!f) return core::fail(core::Errc::io_error, fmt::format("write {}", path.string()));
  return path;
}

std::string joined(const char* const* parts) {
  std::string out;
  for (const char* const* p = parts; *p != nullptr; ++p) out += *p;
  return out;
}

// A private directory for the files EPICS reads at start, removed when the IOC runs.
struct TempDir {
  std::filesystem::path path;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

bool pva_built() noexcept { return WEIR_IOC_PVA != 0; }

std::string database_text(const std::vector<std::unique_ptr<Pv>>& pvs) {
  std::string out = "# weir-epics serve: records made from the pipeline when the server starts\n";
  for (const auto& pv : pvs) out += record_text(*pv);
  return out;
}

std::string access_security_text() {
  return "ASG(DEFAULT) {\n  RULE(1, WRITE)\n}\nASG(READONLY) {\n  RULE(1, READ)\n}\n";
}

core::Result<void> start_ioc(const std::vector<std::unique_ptr<Pv>>& pvs, const std::map<std::string, std::string>& env,
                             bool pva, std::uint64_t max_array_bytes) {
  for (const auto& [name, value] : env) epicsEnvSet(name.c_str(), value.c_str());
  // RSRV reads EPICS_CAS_SERVER_PORT before EPICS_CA_SERVER_PORT: the pipeline's port wins over both.
  if (const auto port = env.find("EPICS_CA_SERVER_PORT"); port != env.end())
    epicsEnvSet("EPICS_CAS_SERVER_PORT", port->second.c_str());
  const char* have = std::getenv("EPICS_CA_MAX_ARRAY_BYTES");
  const std::uint64_t want = max_array_bytes + kArrayBytesSlack;
  if (have == nullptr || std::strtoull(have, nullptr, 10) < want)
    epicsEnvSet("EPICS_CA_MAX_ARRAY_BYTES", std::to_string(want).c_str());

  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/weir-epics-serve.XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    return core::fail(core::Errc::io_error, fmt::format("mkdtemp {}: {}", pattern, std::strerror(errno)));
  TempDir dir{pattern};

  const bool with_pva = pva && pva_built();
#if WEIR_IOC_PVA
  const char* const* parts = with_pva ? weir_ioc_dbd_parts : weir_ioc_ca_dbd_parts;
#else
  const char* const* parts = weir_ioc_ca_dbd_parts;
#endif
  auto dbd = write_file(dir.path, "weir_ioc.dbd", joined(parts));
  if (!dbd) return tl::make_unexpected(dbd.error());
  auto db = write_file(dir.path, "weir.db", database_text(pvs));
  if (!db) return tl::make_unexpected(db.error());
  auto acf = write_file(dir.path, "weir.acf", access_security_text());
  if (!acf) return tl::make_unexpected(acf.error());

  if (dbLoadDatabase(dbd->c_str(), nullptr, nullptr) != 0)
    return core::fail(core::Errc::invalid_argument, "dbLoadDatabase of the embedded weir_ioc.dbd failed");
#if WEIR_IOC_PVA
  const int registered = with_pva ? weir_ioc_registerRecordDeviceDriver(pdbbase) : weir_ioc_ca_registerRecordDeviceDriver(pdbbase);
#else
  const int registered = weir_ioc_ca_registerRecordDeviceDriver(pdbbase);
#endif
  if (registered != 0) return core::fail(core::Errc::invalid_argument, "registerRecordDeviceDriver failed");
  if (dbLoadRecords(db->c_str(), nullptr) != 0)
    return core::fail(core::Errc::invalid_argument, fmt::format("dbLoadRecords {} failed (its errors are printed above)", db->string()));
  if (asSetFilename(acf->c_str()) != 0) return core::fail(core::Errc::invalid_argument, "asSetFilename failed");
  // Every input record may be asked to scan at once: room for all of them, twice, in the callback queues.
  const auto records = static_cast<int>(std::min<std::size_t>(pvs.size(), 1U << 20));
  callbackSetQueueSize(std::max(kCallbackQueueFloor, 2 * records + kCallbackQueueFloor));
  if (iocInit() != 0) return core::fail(core::Errc::invalid_argument, "iocInit failed (its errors are printed above)");
  return {};
}

}  // namespace weir::epics::detail
