// A PV log channel (core/pv_log.hpp) recorded by a real `weir record`: besides its NXdata (the
// blocks, exactly accounted), each PV is an NXlog under /entry/<channel>_pvs with its values and
// their times, its alarm changes, its connection changes and its dropped updates, read back here
// with the HDF5 C API row by row; a PV listed after the file opened gets a new file that logs it.
#include <doctest/doctest.h>

#include <hdf5.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "harness.hpp"
#include "live_arena.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/core/pv_log.hpp"
#include "weir/h5/attribute.hpp"
#include "weir/h5/handle.hpp"

using namespace weir;
using namespace weir::test;

namespace {

constexpr std::uint32_t kMaxEntries = 256;
constexpr std::int64_t kT0 = 1'700'000'000'000'000'000LL;

core::ChannelSpec pv_log_spec(const std::string& name) {  // as epics::log_channel_spec makes it
  core::ChannelSpec c;
  c.name = name;
  c.dtype = core::Dtype::u8;
  c.frame = core::pv_log_frame(kMaxEntries);
  c.samples_per_block = kMaxEntries * core::kPvLogEntryBytes;
  c.rate_hz = static_cast<double>(c.samples_per_block) * 10;
  c.ring_blocks = 64;
  c.labels = {"pvlog"};
  c.wait_timeout_ns = 5'000'000'000;
  return c;
}

core::PvLogEntry entry(std::int64_t t, std::uint32_t pv, core::PvEvent event, core::PvType type = core::PvType::unknown) {
  core::PvLogEntry e;
  e.time_ns = t;
  e.pv = pv;
  e.event = static_cast<std::uint8_t>(event);
  e.type = static_cast<std::uint8_t>(type);
  return e;
}

core::PvLogEntry value_f64(std::int64_t t, std::uint32_t pv, double v, std::uint16_t sev = 0, std::uint16_t status = 0) {
  core::PvLogEntry e = entry(t, pv, core::PvEvent::value, core::PvType::f64);
  e.f64 = v;
  e.severity = sev;
  e.status = status;
  return e;
}

core::PvLogEntry value_i64(std::int64_t t, std::uint32_t pv, std::int64_t v, core::PvType type = core::PvType::i64,
                           const std::string& text = {}) {
  core::PvLogEntry e = entry(t, pv, core::PvEvent::value, type);
  e.i64 = v;
  e.text_bytes = static_cast<std::uint16_t>(text.size());
  std::memcpy(e.text, text.data(), text.size());
  return e;
}

core::PvLogEntry value_text(std::int64_t t, std::uint32_t pv, const std::string& text) {
  core::PvLogEntry e = entry(t, pv, core::PvEvent::value, core::PvType::text);
  e.text_bytes = static_cast<std::uint16_t>(text.size());
  std::memcpy(e.text, text.data(), text.size());
  return e;
}

core::PvLogEntry dropped(std::int64_t t, std::uint32_t pv, std::uint32_t count) {
  core::PvLogEntry e = entry(t, pv, core::PvEvent::dropped);
  e.count = count;
  return e;
}

void publish(core::ChannelWriter& w, const std::vector<core::PvLogEntry>& entries, std::int64_t stamp) {
  REQUIRE(entries.size() <= kMaxEntries);
  std::span<std::byte> slot;
  REQUIRE(w.claim(slot) == core::ClaimStatus::ok);
  std::memcpy(slot.data(), entries.data(), entries.size() * sizeof(core::PvLogEntry));
  w.publish(static_cast<std::uint32_t>(entries.size() * core::kPvLogEntryBytes), static_cast<std::uint64_t>(stamp),
            static_cast<std::uint64_t>(stamp));
}

void set_meta(core::KvStore& kv, const std::string& channel, std::uint32_t index, const std::string& json) {
  REQUIRE(kv.set_text(core::pv_meta_key(channel, index), json) == core::KvStatus::ok);
}

// What one PV's NXlog should hold, from the entries sent (in order) to one file.
struct Expected {
  std::vector<double> f64;
  std::vector<std::int64_t> i64, time, alarm_time, connection_time, dropped_time;
  std::vector<std::string> text;
  std::vector<std::int16_t> severity, status;
  std::vector<std::uint8_t> connection;
  std::vector<std::uint32_t> dropped_count;
  std::uint64_t dropped = 0;
};

std::map<std::uint32_t, Expected> expect(const std::vector<core::PvLogEntry>& entries) {
  std::map<std::uint32_t, Expected> out;
  for (const core::PvLogEntry& e : entries) {
    Expected& x = out[e.pv];
    switch (static_cast<core::PvEvent>(e.event)) {
      case core::PvEvent::value:
        x.time.push_back(e.time_ns);
        if (e.type == static_cast<std::uint8_t>(core::PvType::f64)) x.f64.push_back(e.f64);
        if (e.type == static_cast<std::uint8_t>(core::PvType::i64) ||
            e.type == static_cast<std::uint8_t>(core::PvType::enumerated))
          x.i64.push_back(e.i64);
        if (e.type == static_cast<std::uint8_t>(core::PvType::text) ||
            e.type == static_cast<std::uint8_t>(core::PvType::enumerated))
          x.text.emplace_back(e.text, e.text_bytes);
        if (x.severity.empty() || x.severity.back() != e.severity || x.status.back() != e.status) {
          x.severity.push_back(static_cast<std::int16_t>(e.severity));
          x.status.push_back(static_cast<std::int16_t>(e.status));
          x.alarm_time.push_back(e.time_ns);
        }
        break;
      case core::PvEvent::connected:
      case core::PvEvent::disconnected:
        x.connection.push_back(e.event == static_cast<std::uint8_t>(core::PvEvent::connected) ? 1 : 0);
        x.connection_time.push_back(e.time_ns);
        break;
      case core::PvEvent::dropped:
        x.dropped_count.push_back(e.count);
        x.dropped_time.push_back(e.time_ns);
        x.dropped += e.count;
        break;
    }
  }
  return out;
}

template <class T>
std::vector<T> read_rows(hid_t file, const std::string& path, hid_t type) {
  INFO(path);
  h5::Dataset d(H5Dopen2(file, path.c_str(), H5P_DEFAULT));
  REQUIRE(d.valid());
  h5::Space space(H5Dget_space(d.get()));
  hsize_t n = 0;
  REQUIRE(H5Sget_simple_extent_dims(space.get(), &n, nullptr) == 1);
  std::vector<T> out(n);
  if (n > 0) REQUIRE(H5Dread(d.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) >= 0);
  return out;
}

std::vector<std::string> read_texts(hid_t file, const std::string& path) {
  INFO(path);
  h5::Dataset d(H5Dopen2(file, path.c_str(), H5P_DEFAULT));
  REQUIRE(d.valid());
  h5::Type type(H5Dget_type(d.get()));
  REQUIRE(H5Tget_class(type.get()) == H5T_STRING);
  REQUIRE(H5Tis_variable_str(type.get()) == 0);
  REQUIRE(H5Tget_size(type.get()) == core::kPvTextBytes);
  h5::Space space(H5Dget_space(d.get()));
  hsize_t n = 0;
  REQUIRE(H5Sget_simple_extent_dims(space.get(), &n, nullptr) == 1);
  std::vector<char> bytes(n * core::kPvTextBytes);
  if (n > 0) REQUIRE(H5Dread(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) >= 0);
  std::vector<std::string> out;
  for (hsize_t i = 0; i < n; ++i) {
    const char* s = bytes.data() + i * core::kPvTextBytes;
    out.emplace_back(s, strnlen(s, core::kPvTextBytes));
  }
  return out;
}

std::string text_attr(hid_t file, const std::string& path, const char* name) {
  INFO(path << " @" << name);
  h5::H5Id<&H5Oclose> object(H5Oopen(file, path.c_str(), H5P_DEFAULT));
  REQUIRE(object.valid());
  auto text = h5::read_text_attr(object.get(), name);
  REQUIRE(text);
  return *text;
}

double f64_attr(hid_t file, const std::string& path, const char* name) {
  INFO(path << " @" << name);
  h5::H5Id<&H5Oclose> object(H5Oopen(file, path.c_str(), H5P_DEFAULT));
  REQUIRE(object.valid());
  auto v = h5::read_f64_attr(object.get(), name);
  REQUIRE(v);
  return *v;
}

std::uint64_t u64_attr(hid_t file, const std::string& path, const char* name) {
  INFO(path << " @" << name);
  h5::H5Id<&H5Oclose> object(H5Oopen(file, path.c_str(), H5P_DEFAULT));
  REQUIRE(object.valid());
  auto v = h5::read_u64_attr(object.get(), name);
  REQUIRE(v);
  return *v;
}

bool has_attr(hid_t file, const std::string& path, const char* name) {
  return H5Aexists_by_name(file, path.c_str(), name, H5P_DEFAULT) > 0;
}

std::vector<std::string> text_list_attr(hid_t file, const std::string& path, const char* name) {
  INFO(path << " @" << name);
  h5::Attribute attr(H5Aopen_by_name(file, path.c_str(), name, H5P_DEFAULT, H5P_DEFAULT));
  REQUIRE(attr.valid());
  h5::Space space(H5Aget_space(attr.get()));
  hsize_t n = 0;
  REQUIRE(H5Sget_simple_extent_dims(space.get(), &n, nullptr) == 1);
  h5::Type type(H5Tcopy(H5T_C_S1));
  REQUIRE(H5Tset_size(type.get(), H5T_VARIABLE) >= 0);
  std::vector<char*> texts(n);
  REQUIRE(H5Aread(attr.get(), type.get(), texts.data()) >= 0);
  std::vector<std::string> out(texts.begin(), texts.end());
  REQUIRE(H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, texts.data()) >= 0);
  return out;
}

// Every row of PV `name`'s NXlog against what was sent to the file.
void check_pv(hid_t f, const std::string& name, core::PvType type, const Expected& x) {
  INFO("PV log " << name);
  const std::string g = "/entry/bl.pvlog_pvs/" + name;
  CHECK(text_attr(f, g, "NX_class") == "NXlog");
  CHECK(read_rows<std::int64_t>(f, g + "/time", H5T_NATIVE_INT64) == x.time);
  CHECK(text_attr(f, g + "/time", "units") == "ns");
  CHECK(text_attr(f, g + "/time", "start") == "1970-01-01T00:00:00Z");
  if (type == core::PvType::f64) CHECK(read_rows<double>(f, g + "/value", H5T_NATIVE_DOUBLE) == x.f64);
  if (type == core::PvType::i64 || type == core::PvType::enumerated)
    CHECK(read_rows<std::int64_t>(f, g + "/value", H5T_NATIVE_INT64) == x.i64);
  if (type == core::PvType::text) CHECK(read_texts(f, g + "/value") == x.text);
  if (type == core::PvType::enumerated) CHECK(read_texts(f, g + "/value_string") == x.text);
  CHECK(H5Lexists(f, (g + "/value_string").c_str(), H5P_DEFAULT) == (type == core::PvType::enumerated ? 1 : 0));
  CHECK(read_rows<std::int16_t>(f, g + "/alarm_severity", H5T_NATIVE_INT16) == x.severity);
  CHECK(read_rows<std::int16_t>(f, g + "/alarm_status", H5T_NATIVE_INT16) == x.status);
  CHECK(read_rows<std::int64_t>(f, g + "/alarm_time", H5T_NATIVE_INT64) == x.alarm_time);
  CHECK(text_attr(f, g + "/alarm_severity", "names") == "NO_ALARM,MINOR,MAJOR,INVALID");
  CHECK(text_attr(f, g + "/alarm_status", "names") ==
        "NO_ALARM,READ,WRITE,HIHI,HIGH,LOLO,LOW,STATE,COS,COMM,TIMEOUT,HWLIMIT,CALC,SCAN,LINK,SOFT,BAD_SUB,UDF,"
        "DISABLE,SIMM,READ_ACCESS,WRITE_ACCESS");
  CHECK(read_rows<std::uint8_t>(f, g + "/connection_status", H5T_NATIVE_UINT8) == x.connection);
  CHECK(read_rows<std::int64_t>(f, g + "/connection_status_time", H5T_NATIVE_INT64) == x.connection_time);
  CHECK(text_attr(f, g + "/connection_status", "names") == "disconnected,connected");
  CHECK(read_rows<std::uint32_t>(f, g + "/dropped_count", H5T_NATIVE_UINT32) == x.dropped_count);
  CHECK(read_rows<std::int64_t>(f, g + "/dropped_time", H5T_NATIVE_INT64) == x.dropped_time);
  CHECK(u64_attr(f, g, "dropped") == x.dropped);
}

std::vector<core::PvLogEntry> concat(const std::vector<std::vector<core::PvLogEntry>>& blocks) {
  std::vector<core::PvLogEntry> all;
  for (const auto& b : blocks) all.insert(all.end(), b.begin(), b.end());
  return all;
}

}  // namespace

TEST_SUITE("recorders.stream.pv_logs") {

TEST_CASE("a PV log channel is recorded as one NXlog per PV: values, alarm changes, connections and drops, "
          "row by row" *
          doctest::timeout(90)) {
  ScratchArena scratch("recpv");
  TempDir dir;
  REQUIRE(core::create_channel(scratch.arena(), pv_log_spec("bl.pvlog")));
  core::KvStore kv(scratch.arena());
  set_meta(kv, "bl.pvlog", 0,
           R"({"pv":"SR:CURRENT","key":"ring.current","type":"f64","host":"127.0.0.1:5064","units":"mA",)"
           R"("precision":3,"display":[0,500],"control":[0,450],"alarm":[10,480],"warning":[20,470]})");
  set_meta(kv, "bl.pvlog", 1, R"({"pv":"BL:COUNT","key":"bl.count","type":"i64","host":"127.0.0.1:5064","units":"counts"})");
  set_meta(kv, "bl.pvlog", 2,
           R"({"pv":"BL{Sh:1}Pos-Sts","key":"bl.shutter","type":"enum","host":"127.0.0.1:5065","enum":["Closed","Open"]})");
  set_meta(kv, "bl.pvlog", 3, R"({"pv":"BL:MODE","key":"bl.mode","type":"text"})");
  Program recorder = Program::start(record_argv(scratch.name(), {"--channels", "bl.pvlog", "--out", dir.str(), "--flush-ms", "10"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  auto writer = core::ChannelWriter::open(scratch.arena(), "bl.pvlog");
  REQUIRE(writer);

  std::vector<std::vector<core::PvLogEntry>> blocks;
  std::int64_t t = kT0;
  blocks.push_back({entry(t += 1000, 0, core::PvEvent::connected)});  // a block of one entry
  blocks.push_back({value_f64(t += 1000, 0, 100.5)});
  {  // a full block of 256: every kind of entry, alarm changes, a disconnect and reconnect, drops
    std::vector<core::PvLogEntry> b;
    b.push_back(entry(t += 1000, 1, core::PvEvent::connected));
    b.push_back(entry(t += 1000, 2, core::PvEvent::connected));
    b.push_back(entry(t += 1000, 3, core::PvEvent::connected));
    b.push_back(value_text(t += 1000, 3, "idle"));
    b.push_back(value_i64(t += 1000, 2, 0, core::PvType::enumerated, "Closed"));
    b.push_back(dropped(t += 1000, 0, 5));
    b.push_back(entry(t += 1000, 1, core::PvEvent::disconnected));
    b.push_back(entry(t += 1000, 1, core::PvEvent::connected));
    b.push_back(value_text(t += 1000, 3, std::string(core::kPvTextBytes, 'x')));  // a full 40 bytes, no NUL
    b.push_back(dropped(t += 1000, 0, 2));
    for (std::uint32_t i = 0; b.size() < kMaxEntries; ++i) {
      // SR:CURRENT climbs through HIGH (MINOR) and HIHI (MAJOR) and back; BL:COUNT counts; the
      // shutter opens and closes.
      const double v = 400 + i;
      const std::uint16_t sev = v >= 480 ? 2 : v >= 470 ? 1 : 0;
      const std::uint16_t status = v >= 480 ? 3 : v >= 470 ? 4 : 0;
      if (i % 3 == 0) b.push_back(value_f64(t += 1000, 0, i < 150 ? v : 300.0, i < 150 ? sev : 0, i < 150 ? status : 0));
      if (i % 3 == 1) b.push_back(value_i64(t += 1000, 1, -static_cast<std::int64_t>(i) * 1'000'000'007LL));
      if (i % 3 == 2 && i % 9 == 2)
        b.push_back(value_i64(t += 1000, 2, (i / 9) % 2, core::PvType::enumerated, (i / 9) % 2 ? "Open" : "Closed"));
      if (i % 3 == 2 && i % 9 != 2) b.push_back(value_f64(t += 1000, 0, 300.0 + i, 3, 17));  // INVALID, UDF
    }
    blocks.push_back(std::move(b));
  }
  blocks.push_back({value_i64(t += 1000, 2, 1, core::PvType::enumerated, "Open")});
  for (std::size_t i = 0; i < blocks.size(); ++i) publish(*writer, blocks[i], kT0 + static_cast<std::int64_t>(i) * 1'000'000);
  // BL:COUNT's server moves and its units change: the meta key is rewritten before it reconnects.
  REQUIRE(eventually([&] { return recorder_read_up(scratch.arena(), "bl.pvlog", recorder.pid()); }));
  set_meta(kv, "bl.pvlog", 1, R"({"pv":"BL:COUNT","key":"bl.count","type":"i64","host":"10.0.0.7:5064","units":"events"})");
  blocks.push_back({entry(t += 1000, 1, core::PvEvent::disconnected), entry(t += 1000, 1, core::PvEvent::connected),
                    value_i64(t += 1000, 1, 42)});
  publish(*writer, blocks.back(), kT0 + 10'000'000);
  REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "bl.pvlog", recorder.pid()) >= blocks.size(); }));
  stop_cleanly(recorder);

  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 1);
  const std::vector<Facts> facts = inspect_all(files);  // the NXdata's tables: every block, exactly
  INFO(facts[0].exit.out << facts[0].exit.err);
  CHECK(facts[0].ok());
  CHECK(facts[0].num("bl.pvlog", "blocks") == blocks.size());
  const std::vector<core::PvLogEntry> all = concat(blocks);
  const std::uint64_t bytes = all.size() * core::kPvLogEntryBytes;
  CHECK(facts[0].num("bl.pvlog", "samples") == bytes);

  // The NeXus walk (h5py): every group a base class, every numeric field with units, time and value
  // of each NXlog of one length.
  const Exit walked = run_program({WEIR_PYTHON, std::string(WEIR_RECORDER_SCRIPTS) + "/nexus_walk_test.py", WEIR_CLI_PATH,
                                   WEIR_EXAMPLES_DIR, "-", files[0]});
  INFO(walked.out << walked.err);
  CHECK(walked.code == 0);

  h5::File f(H5Fopen(files[0].c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  REQUIRE(f.valid());
  const auto want = expect(all);
  CHECK(text_attr(f.get(), "/entry/bl.pvlog_pvs", "NX_class") == "NXcollection");
  CHECK(text_attr(f.get(), "/entry/bl.pvlog_pvs", "log_channel") == "bl.pvlog");
  CHECK(u64_attr(f.get(), "/entry/bl.pvlog_pvs", "malformed_entries") == 0);
  check_pv(f.get(), "SR_CURRENT", core::PvType::f64, want.at(0));
  check_pv(f.get(), "BL_COUNT", core::PvType::i64, want.at(1));
  check_pv(f.get(), "BL_Sh_1_Pos_Sts", core::PvType::enumerated, want.at(2));
  check_pv(f.get(), "BL_MODE", core::PvType::text, want.at(3));

  // The numbers spelled out once, so the expectations above are not only the model's.
  CHECK(want.at(0).dropped == 7);
  CHECK(want.at(0).dropped_count == std::vector<std::uint32_t>{5, 2});
  CHECK(want.at(0).f64.front() == 100.5);
  CHECK(want.at(0).severity.front() == 0);  // the first value's row
  CHECK(want.at(0).alarm_time.front() == kT0 + 2000);
  for (const auto& [sev, status] : {std::pair{1, 4}, std::pair{2, 3}, std::pair{3, 17}}) {  // HIGH, HIHI, UDF
    bool seen = false;
    for (std::size_t i = 0; i < want.at(0).severity.size(); ++i)
      seen = seen || (want.at(0).severity[i] == sev && want.at(0).status[i] == status);
    CHECK(seen);
  }
  CHECK(want.at(0).severity.size() < want.at(0).f64.size());  // unchanged alarms add no row
  CHECK(want.at(2).i64.back() == 1);
  CHECK(want.at(2).text.back() == "Open");
  CHECK(want.at(1).connection == std::vector<std::uint8_t>{1, 0, 1, 0, 1});
  CHECK(want.at(3).text.back() == std::string(core::kPvTextBytes, 'x'));

  // Attributes: the PV as the meta key says it (BL:COUNT as rewritten before it reconnected).
  const std::string g0 = "/entry/bl.pvlog_pvs/SR_CURRENT";
  CHECK(text_attr(f.get(), g0, "pv_name") == "SR:CURRENT");
  CHECK(text_attr(f.get(), g0, "key") == "ring.current");
  CHECK(text_attr(f.get(), g0, "type") == "f64");
  CHECK(text_attr(f.get(), g0, "host") == "127.0.0.1:5064");
  CHECK(u64_attr(f.get(), g0, "pv_index") == 0);
  CHECK(text_attr(f.get(), g0 + "/value", "units") == "mA");
  CHECK(u64_attr(f.get(), g0 + "/value", "precision") == 3);
  CHECK(f64_attr(f.get(), g0 + "/value", "display_low") == 0);
  CHECK(f64_attr(f.get(), g0 + "/value", "display_high") == 500);
  CHECK(f64_attr(f.get(), g0 + "/value", "control_low") == 0);
  CHECK(f64_attr(f.get(), g0 + "/value", "control_high") == 450);
  CHECK(f64_attr(f.get(), g0 + "/value", "alarm_low") == 10);
  CHECK(f64_attr(f.get(), g0 + "/value", "alarm_high") == 480);
  CHECK(f64_attr(f.get(), g0 + "/value", "warning_low") == 20);
  CHECK(f64_attr(f.get(), g0 + "/value", "warning_high") == 470);
  const std::string g1 = "/entry/bl.pvlog_pvs/BL_COUNT";
  CHECK(text_attr(f.get(), g1, "pv_name") == "BL:COUNT");
  CHECK(text_attr(f.get(), g1, "type") == "i64");
  CHECK(text_attr(f.get(), g1, "host") == "10.0.0.7:5064");
  CHECK(text_attr(f.get(), g1 + "/value", "units") == "events");
  CHECK_FALSE(has_attr(f.get(), g1 + "/value", "display_low"));
  CHECK_FALSE(has_attr(f.get(), g1 + "/value", "precision"));
  const std::string g2 = "/entry/bl.pvlog_pvs/BL_Sh_1_Pos_Sts";
  CHECK(text_attr(f.get(), g2, "pv_name") == "BL{Sh:1}Pos-Sts");
  CHECK(text_attr(f.get(), g2, "type") == "enum");
  CHECK(text_list_attr(f.get(), g2 + "/value", "enum_strings") == std::vector<std::string>{"Closed", "Open"});
  const std::string g3 = "/entry/bl.pvlog_pvs/BL_MODE";
  CHECK(text_attr(f.get(), g3, "type") == "text");
  CHECK(text_attr(f.get(), g3, "host") == "");
}

TEST_CASE("a PV listed after the file opened gets a new file that logs all of it, and each file's first value of a "
          "PV has an alarm row" *
          doctest::timeout(90)) {
  ScratchArena scratch("recpvrot");
  TempDir dir;
  REQUIRE(core::create_channel(scratch.arena(), pv_log_spec("bl.pvlog")));
  core::KvStore kv(scratch.arena());
  set_meta(kv, "bl.pvlog", 0, R"({"pv":"SR:CURRENT","key":"ring.current","type":"f64","units":"mA"})");
  Program recorder = Program::start(record_argv(scratch.name(), {"--channels", "bl.pvlog", "--out", dir.str(), "--flush-ms", "10"}));
  REQUIRE(wait_for_recorder(scratch.arena(), recorder, 1, dir.path()));
  auto writer = core::ChannelWriter::open(scratch.arena(), "bl.pvlog");
  REQUIRE(writer);
  std::int64_t t = kT0;
  const std::vector<core::PvLogEntry> first{entry(t += 1000, 0, core::PvEvent::connected), value_f64(t += 1000, 0, 1.0, 1, 4),
                                            value_f64(t += 1000, 0, 2.0, 1, 4)};
  publish(*writer, first, kT0);
  REQUIRE(eventually([&] { return recorder_read_up(scratch.arena(), "bl.pvlog", recorder.pid()); }));
  // A second PV, listed now (as a driver whose PV list grew): its entries go into a new file.
  set_meta(kv, "bl.pvlog", 1, R"({"pv":"BL:COUNT","key":"bl.count","type":"i64","units":"counts"})");
  const std::vector<core::PvLogEntry> second{value_f64(t += 1000, 0, 3.0, 1, 4), entry(t += 1000, 1, core::PvEvent::connected),
                                             value_i64(t += 1000, 1, 10), value_f64(t += 1000, 0, 4.0, 1, 4),
                                             value_i64(t += 1000, 1, 11)};
  publish(*writer, second, kT0 + 1'000'000);
  REQUIRE(eventually([&] { return h5_files(dir.path()).size() >= 2; }));
  const std::vector<core::PvLogEntry> third{value_f64(t += 1000, 0, 5.0, 1, 4), value_i64(t += 1000, 1, 12),
                                            dropped(t += 1000, 1, 3)};
  publish(*writer, third, kT0 + 2'000'000);
  REQUIRE(eventually([&] { return recorder_blocks_read(scratch.arena(), "bl.pvlog", recorder.pid()) >= 3; }));
  stop_cleanly(recorder);

  const auto files = h5_files(dir.path());
  REQUIRE(files.size() == 2);
  const std::vector<Facts> facts = inspect_all(files);
  for (const Facts& x : facts) {
    INFO(x.exit.out << x.exit.err);
    CHECK(x.ok());
  }
  // The blocks: the first two in the first file (the second made it rotate), the third in the next.
  CHECK(facts[0].num("bl.pvlog", "blocks") == 2);
  CHECK(facts[1].num("bl.pvlog", "blocks") == 1);
  // The first file: SR:CURRENT's entries of both blocks; no BL:COUNT (it was not listed when it opened).
  std::vector<core::PvLogEntry> in_first = first;
  for (const core::PvLogEntry& e : second)
    if (e.pv == 0) in_first.push_back(e);
  std::vector<core::PvLogEntry> in_second;
  for (const core::PvLogEntry& e : second)
    if (e.pv == 1) in_second.push_back(e);
  in_second.insert(in_second.end(), third.begin(), third.end());
  {
    h5::File f(H5Fopen(files[0].c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    REQUIRE(f.valid());
    const auto want = expect(in_first);
    check_pv(f.get(), "SR_CURRENT", core::PvType::f64, want.at(0));
    CHECK(want.at(0).severity.size() == 1);  // MINOR/HIGH throughout: one row
    CHECK(H5Lexists(f.get(), "/entry/bl.pvlog_pvs/BL_COUNT", H5P_DEFAULT) == 0);
  }
  {
    h5::File f(H5Fopen(files[1].c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    REQUIRE(f.valid());
    const auto want = expect(in_second);
    check_pv(f.get(), "SR_CURRENT", core::PvType::f64, want.at(0));  // its first value here has an alarm row again
    check_pv(f.get(), "BL_COUNT", core::PvType::i64, want.at(1));
    CHECK(want.at(1).i64 == std::vector<std::int64_t>{10, 11, 12});
    CHECK(want.at(1).connection == std::vector<std::uint8_t>{1});
    CHECK(want.at(1).dropped == 3);
    CHECK(text_attr(f.get(), "/entry/bl.pvlog_pvs/BL_COUNT/value", "units") == "counts");
  }
}

}  // TEST_SUITE
