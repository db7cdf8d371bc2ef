#pragma once
// One served record as weir-epics sees it: what the update thread stages for an input record (the
// value, alarm and timestamp its device support copies in when the scan comes), and how a put to an
// output record reaches weir. Shared by the device support (dev_weir.cpp), the database text
// (ioc_database.cpp) and the server (ioc_server.cpp). Private to epics/ioc.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <alarm.h>
#include <callback.h>
#include <dbScan.h>
#include <epicsTime.h>

struct dbCommon;

namespace weir::epics::detail {

/// The record type behind a PV.
enum class RecKind : std::uint8_t { ai, bi, mbbi, int64in, lsi, waveform, ao, bo, int64out, lso };

/// What a PV means to the server (which of its tables `index` points into).
enum class Role : std::uint8_t {
  rate, lost, dropped, lag,          // per channel (index: the channel's status row)
  disk_free,                         // the recorders' directory
  part_state, part_restarts,         // per part (index: the part)
  key_in, key_out,                   // a key (index: options.keys)
  wave, env_min, env_max,            // a channel's newest block, its envelope (index: options.channels)
  capture, capture_rbv, num_captured, file_path, file_path_rbv, full_file_name, file_number,
  run_state, run_number, run_title, run_operator, run_sample, run_start, run_stop, run_abort, run_message,
};

/// Display and limit fields of a record's database text.
struct PvFields {
  std::string desc, egu;
  int prec = -1;                  // -1: none
  double low = 0, high = 0;       // both 0: none (LOPR/HOPR, and DRVL/DRVH on outputs)
  std::uint32_t elements = 1;     // waveform NELM, lsi/lso SIZV
  std::vector<std::string> states;  // bi/bo ZNAM ONAM, mbbi ZRST ONST ...
  bool read_only = true;          // ASG READONLY: Channel Access and pvAccess refuse puts
};

struct Pv {
  std::string name;  // the record's full name (prefix included)
  RecKind kind = RecKind::ai;
  Role role = Role::rate;
  std::uint32_t index = 0;
  PvFields fields;

  // Set when the record is initialised (iocInit), read-only afterwards.
  IOSCANPVT scan = nullptr;
  dbCommon* rec = nullptr;

  // Staged by the update thread, copied into the record by its read routine; under `m`.
  std::mutex m;
  double f64 = 0;
  std::int64_t i64 = 0;
  std::string text;             // capacity reserved at start: assignments within it allocate nothing
  std::vector<double> wave;     // sized NELM at start
  std::uint32_t wave_len = 0;
  epicsEnum16 sevr = INVALID_ALARM, stat = UDF_ALARM;
  epicsTimeStamp time{};
  bool staged = false;          // something was staged since the server started

  // Output records: true while the server itself processes the record to show weir's value, so the
  // write routine passes it by (the value came from weir). Under the record's lock.
  bool syncing = false;
  // Asynchronous (run-control) puts: the result the control thread leaves for the completing pass.
  epicsCallback done{};
  bool async_ok = true;
  std::int64_t async_val = 0;
};

/// How puts reach weir. Thread: the database's (RSRV's, QSRV's and callback threads), record locked.
class PutHandler {
 public:
  virtual ~PutHandler() = default;
  /// A put to an output record's value: false refuses it (the record then shows WRITE/INVALID).
  virtual bool put_f64(Pv& pv, double v) noexcept = 0;
  virtual bool put_i64(Pv& pv, std::int64_t v) noexcept = 0;
  virtual bool put_text(Pv& pv, std::string_view v) noexcept = 0;
  /// An asynchronous put (run control): queues the work; false when it cannot be queued.
  virtual bool queue(Pv& pv, std::int64_t v) noexcept = 0;
};

/// The records of this process's database by name, and where their puts go. Filled before iocInit,
/// read by the device support's init_record; one per process, like the IOC database.
struct Registry {
  std::map<std::string, Pv*, std::less<>> by_name;
  PutHandler* handler = nullptr;
};
Registry& registry() noexcept;

}  // namespace weir::epics::detail
