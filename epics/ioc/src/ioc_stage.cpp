// epics "serve", values into records: an input record's value, alarm and time staged under its PV's
// lock for its device support to copy in, and the scan asked for (post); weir's value shown in an lso
// output record by processing it with `syncing` set. Used by every thread of the server.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string_view>

#include <dbAccess.h>
#include <dbCommon.h>
#include <dbLock.h>
#include <dbScan.h>
#include <lsoRecord.h>

#include "ioc_server_impl.hpp"

namespace weir::epics::detail {

void Server::post(Pv& pv) noexcept {
  (void)scanIoRequest(pv.scan);
  updates_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter for the report
}

namespace {

// Stages a value with its alarm and time under the PV's lock, unless the record already shows the
// same: `same_value` compares the staged value, `set_value` writes it. True when staged.
template <class Same, class Set>
bool stage(Pv& pv, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t, Same same_value, Set set_value) noexcept {
  const std::lock_guard lock(pv.m);
  if (pv.staged && same_value() && pv.sevr == sevr && pv.stat == stat) return false;
  set_value();
  pv.sevr = sevr;
  pv.stat = stat;
  pv.time = t;
  pv.staged = true;
  return true;
}

}  // namespace

bool Server::stage_f64(Pv& pv, double v, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept {
  if (!stage(pv, sevr, stat, t, [&] { return same(pv.f64, v); }, [&] { pv.f64 = v; })) return false;
  post(pv);
  return true;
}

bool Server::stage_i64(Pv& pv, std::int64_t v, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept {
  if (!stage(pv, sevr, stat, t, [&] { return pv.i64 == v; }, [&] { pv.i64 = v; })) return false;
  post(pv);
  return true;
}

bool Server::stage_text(Pv& pv, std::string_view v, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept {
  v = v.substr(0, std::min<std::size_t>(v.size(), pv.text.capacity()));  // within the capacity: no allocation
  if (!stage(pv, sevr, stat, t, [&] { return pv.text == v; }, [&] { pv.text.assign(v); })) return false;
  post(pv);
  return true;
}

bool Server::stage_alarm(Pv& pv, epicsEnum16 sevr, epicsEnum16 stat, const epicsTimeStamp& t) noexcept {
  {
    const std::lock_guard lock(pv.m);
    if (pv.sevr == sevr && pv.stat == stat) return false;
    pv.sevr = sevr;
    pv.stat = stat;
    pv.time = t;
  }
  post(pv);
  return true;
}

// Shows `text` in an lso record (weir's value, not a put): processed with `syncing` set.
void show_lso(Pv& pv, std::string_view text) {
  auto* rec = reinterpret_cast<lsoRecord*>(pv.rec);
  dbScanLock(pv.rec);
  if (rec->pact == 0 && rec->sizv > 0) {
    const std::size_t n = std::min<std::size_t>(text.size(), rec->sizv - 1U);
    if (rec->udf != 0 || std::string_view(rec->val, strnlen(rec->val, rec->sizv)) != text.substr(0, n)) {
      std::memcpy(rec->val, text.data(), n);
      rec->val[n] = '\0';
      rec->len = static_cast<epicsUInt32>(n + 1);
      rec->udf = 0;
      pv.syncing = true;
      (void)dbProcess(pv.rec);
      pv.syncing = false;
    }
  }
  dbScanUnlock(pv.rec);
}

}  // namespace weir::epics::detail
