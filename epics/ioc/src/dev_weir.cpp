// Device support "weir" (weirDevSup.dbd): input records copy what the update thread staged in their
// Pv (value, alarm, timestamp: TSE = -2, the device sets TIME) when their "I/O Intr" scan comes;
// output records hand puts to the PutHandler. The bo records of run control are asynchronous: the
// first pass queues the transition and leaves PACT set, the control thread completes it with
// callbackRequestProcessCallback, and the second pass sets the alarm and the value it left.
#include <algorithm>
#include <cstring>
#include <string_view>

#include <aiRecord.h>
#include <alarm.h>
#include <aoRecord.h>
#include <biRecord.h>
#include <boRecord.h>
#include <dbAccess.h>
#include <dbCommon.h>
#include <devSup.h>
#include <int64inRecord.h>
#include <int64outRecord.h>
#include <lsiRecord.h>
#include <lsoRecord.h>
#include <mbbiRecord.h>
#include <recGbl.h>
#include <waveformRecord.h>

#include "ioc_pv.hpp"

namespace weir::epics::detail {

Registry& registry() noexcept {
  static Registry r;
  return r;
}

namespace {

constexpr long kNoConvert = 2;  // from a read or init routine: VAL is set, no RVAL conversion

Pv* pv_of(const dbCommon* rec) noexcept { return static_cast<Pv*>(rec->dpvt); }

long init_common(dbCommon* rec) noexcept {
  const auto it = registry().by_name.find(std::string_view(rec->name));
  if (it == registry().by_name.end()) {
    recGblRecordError(S_db_badField, rec, "weir: a record weir-epics did not make");
    return S_db_badField;
  }
  rec->dpvt = it->second;
  it->second->rec = rec;
  if (it->second->kind == RecKind::ai || it->second->kind == RecKind::bi || it->second->kind == RecKind::mbbi ||
      it->second->kind == RecKind::int64in || it->second->kind == RecKind::lsi || it->second->kind == RecKind::waveform)
    scanIoInit(&it->second->scan);
  return 0;
}

long get_ioint_info(int, dbCommon* rec, IOSCANPVT* out) {
  Pv* pv = pv_of(rec);
  if (pv == nullptr) return S_db_badField;
  *out = pv->scan;
  return 0;
}

// The staged alarm and time, with `pv.m` held.
void take_alarm_and_time(Pv& pv, dbCommon* rec) noexcept {
  if (pv.sevr != NO_ALARM) recGblSetSevr(rec, pv.stat, pv.sevr);
  rec->time = pv.time;
}

template <class Rec>
long init_in(Rec* rec) {
  return init_common(reinterpret_cast<dbCommon*>(rec));
}

long read_ai(aiRecord* rec) {
  Pv* pv = pv_of(reinterpret_cast<dbCommon*>(rec));
  if (pv == nullptr) return S_db_badField;
  const std::lock_guard lock(pv->m);
  rec->val = pv->f64;
  rec->udf = pv->staged ? 0 : 1;
  take_alarm_and_time(*pv, reinterpret_cast<dbCommon*>(rec));
  return kNoConvert;
}

long read_bi(biRecord* rec) {
  Pv* pv = pv_of(reinterpret_cast<dbCommon*>(rec));
  if (pv == nullptr) return S_db_badField;
  const std::lock_guard lock(pv->m);
  rec->val = pv->i64 != 0 ? 1 : 0;
  rec->udf = pv->staged ? 0 : 1;
  take_alarm_and_time(*pv, reinterpret_cast<dbCommon*>(rec));
  return kNoConvert;
}

long read_mbbi(mbbiRecord* rec) {
  Pv* pv = pv_of(reinterpret_cast<dbCommon*>(rec));
  if (pv == nullptr) return S_db_badField;
  const std::lock_guard lock(pv->m);
  rec->val = static_cast<epicsEnum16>(std::clamp<std::int64_t>(pv->i64, 0, 15));
  rec->udf = pv->staged ? 0 : 1;
  take_alarm_and_time(*pv, reinterpret_cast<dbCommon*>(rec));
  return kNoConvert;
}

long read_int64in(int64inRecord* rec) {
  Pv* pv = pv_of(reinterpret_cast<dbCommon*>(rec));
  if (pv == nullptr) return S_db_badField;
  const std::lock_guard lock(pv->m);
  rec->val = pv->i64;
  rec->udf = pv->staged ? 0 : 1;
  take_alarm_and_time(*pv, reinterpret_cast<dbCommon*>(rec));
  return 0;
}

long read_lsi(lsiRecord* rec) {
  Pv* pv = pv_of(reinterpret_cast<dbCommon*>(rec));
  if (pv == nullptr || rec->sizv == 0) return S_db_badField;
  const std::lock_guard lock(pv->m);
  const std::size_t n = std::min<std::size_t>(pv->text.size(), rec->sizv - 1U);
  std::memcpy(rec->val, pv->text.data(), n);
  rec->val[n] = '\0';
  rec->len = static_cast<epicsUInt32>(n + 1);
  rec->udf = pv->staged ? 0 : 1;
  take_alarm_and_time(*pv, reinterpret_cast<dbCommon*>(rec));
  return 0;
}

long init_wf(waveformRecord* rec) {
  const long status = init_common(reinterpret_cast<dbCommon*>(rec));
  if (status == 0 && rec->ftvl != menuFtypeDOUBLE) {
    recGblRecordError(S_db_badField, rec, "weir: a waveform of weir-epics holds DOUBLE");
    return S_db_badField;
  }
  return status;
}

long read_wf(waveformRecord* rec) {
  Pv* pv = pv_of(reinterpret_cast<dbCommon*>(rec));
  if (pv == nullptr) return S_db_badField;
  const std::lock_guard lock(pv->m);
  const std::uint32_t n = std::min<std::uint32_t>({pv->wave_len, rec->nelm, static_cast<std::uint32_t>(pv->wave.size())});
  std::memcpy(rec->bptr, pv->wave.data(), n * sizeof(double));
  rec->nord = n;
  rec->udf = pv->staged ? 0 : 1;
  take_alarm_and_time(*pv, reinterpret_cast<dbCommon*>(rec));
  return 0;
}

// --- outputs ---------------------------------------------------------------------------------------

template <class Rec>
long init_out(Rec* rec) {
  const long status = init_common(reinterpret_cast<dbCommon*>(rec));
  return status == 0 ? kNoConvert : status;
}

long init_out_plain(dbCommon* rec) { return init_common(rec); }

void refuse(dbCommon* rec) noexcept { recGblSetSevr(rec, WRITE_ALARM, INVALID_ALARM); }

long write_ao(aoRecord* rec) {
  Pv* pv = pv_of(reinterpret_cast<dbCommon*>(rec));
  if (pv == nullptr) return S_db_badField;
  if (pv->syncing) return 0;
  if (!registry().handler->put_f64(*pv, rec->val)) refuse(reinterpret_cast<dbCommon*>(rec));
  return 0;
}

long write_int64out(int64outRecord* rec) {
  Pv* pv = pv_of(reinterpret_cast<dbCommon*>(rec));
  if (pv == nullptr) return S_db_badField;
  if (pv->syncing) return 0;
  if (!registry().handler->put_i64(*pv, rec->val)) refuse(reinterpret_cast<dbCommon*>(rec));
  return 0;
}

long write_lso(lsoRecord* rec) {
  Pv* pv = pv_of(reinterpret_cast<dbCommon*>(rec));
  if (pv == nullptr) return S_db_badField;
  if (pv->syncing) return 0;
  const std::string_view text(rec->val, strnlen(rec->val, rec->sizv));
  if (!registry().handler->put_text(*pv, text)) refuse(reinterpret_cast<dbCommon*>(rec));
  return 0;
}

long write_bo(boRecord* rec) {
  Pv* pv = pv_of(reinterpret_cast<dbCommon*>(rec));
  if (pv == nullptr) return S_db_badField;
  if (pv->syncing) return 0;
  if (rec->pact == 0) {  // first pass: hand the transition to the control thread
    if (!registry().handler->queue(*pv, rec->val)) {
      refuse(reinterpret_cast<dbCommon*>(rec));
      return 0;
    }
    rec->pact = 1;
    return 0;
  }
  const std::lock_guard lock(pv->m);  // second pass, from callbackRequestProcessCallback
  if (!pv->async_ok) refuse(reinterpret_cast<dbCommon*>(rec));
  rec->val = pv->async_val != 0 ? 1 : 0;
  return 0;
}

// Entry tables in the layout of EPICS's dset: the count, then report, init, init_record,
// get_ioint_info and the record type's own routines, each with its real signature.
template <class Rec, class Io>
struct Dset5 {
  long number;
  long (*report)(int);
  long (*init)(int);
  long (*init_record)(Rec*);
  long (*get_ioint_info)(int, dbCommon*, IOSCANPVT*);
  long (*io)(Io*);
};

template <class Rec>
struct Dset6 {
  long number;
  long (*report)(int);
  long (*init)(int);
  long (*init_record)(Rec*);
  long (*get_ioint_info)(int, dbCommon*, IOSCANPVT*);
  long (*io)(Rec*);
  long (*special_linconv)(Rec*, int);
};

Dset6<aiRecord> dev_ai{6, nullptr, nullptr, &init_in<aiRecord>, &get_ioint_info, &read_ai, nullptr};
Dset5<biRecord, biRecord> dev_bi{5, nullptr, nullptr, &init_in<biRecord>, &get_ioint_info, &read_bi};
Dset5<mbbiRecord, mbbiRecord> dev_mbbi{5, nullptr, nullptr, &init_in<mbbiRecord>, &get_ioint_info, &read_mbbi};
Dset5<int64inRecord, int64inRecord> dev_i64in{5, nullptr, nullptr, &init_in<int64inRecord>, &get_ioint_info, &read_int64in};
Dset5<lsiRecord, lsiRecord> dev_lsi{5, nullptr, nullptr, &init_in<lsiRecord>, &get_ioint_info, &read_lsi};
Dset5<waveformRecord, waveformRecord> dev_wf{5, nullptr, nullptr, &init_wf, &get_ioint_info, &read_wf};
Dset6<aoRecord> dev_ao{6, nullptr, nullptr, &init_out<aoRecord>, nullptr, &write_ao, nullptr};
Dset5<boRecord, boRecord> dev_bo{5, nullptr, nullptr, &init_out<boRecord>, nullptr, &write_bo};
Dset5<dbCommon, int64outRecord> dev_i64out{5, nullptr, nullptr, &init_out_plain, nullptr, &write_int64out};
Dset5<dbCommon, lsoRecord> dev_lso{5, nullptr, nullptr, &init_out_plain, nullptr, &write_lso};

}  // namespace
}  // namespace weir::epics::detail

// The names registerRecordDeviceDriver.pl's code looks for (epicsExportAddress(dset, ...) spelled out).
extern "C" {
// NOLINTBEGIN: EPICS's names
dset* pvar_dset_devAiWeir = reinterpret_cast<dset*>(&weir::epics::detail::dev_ai);
dset* pvar_dset_devBiWeir = reinterpret_cast<dset*>(&weir::epics::detail::dev_bi);
dset* pvar_dset_devMbbiWeir = reinterpret_cast<dset*>(&weir::epics::detail::dev_mbbi);
dset* pvar_dset_devI64inWeir = reinterpret_cast<dset*>(&weir::epics::detail::dev_i64in);
dset* pvar_dset_devLsiWeir = reinterpret_cast<dset*>(&weir::epics::detail::dev_lsi);
dset* pvar_dset_devWfWeir = reinterpret_cast<dset*>(&weir::epics::detail::dev_wf);
dset* pvar_dset_devAoWeir = reinterpret_cast<dset*>(&weir::epics::detail::dev_ao);
dset* pvar_dset_devBoWeir = reinterpret_cast<dset*>(&weir::epics::detail::dev_bo);
dset* pvar_dset_devI64outWeir = reinterpret_cast<dset*>(&weir::epics::detail::dev_i64out);
dset* pvar_dset_devLsoWeir = reinterpret_cast<dset*>(&weir::epics::detail::dev_lso);
// NOLINTEND
}
