// The host clock's synchronisation state, best effort.
#include "host_clock.hpp"

#include <sys/timex.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "weir/core/clock.hpp"

namespace weir::rec {

namespace {

constexpr const char* kChronyc = "/usr/bin/chronyc";
constexpr const char* kChronyTracking = "/usr/bin/chronyc -c tracking 2>/dev/null";
constexpr const char* kTimesyncdSynced = "/run/systemd/timesync/synchronized";  // exists once timesyncd synced
constexpr const char* kPtpDevices = "/sys/class/ptp";
constexpr std::size_t kMaxSourceBytes = 256;

struct Flag {
  int bit;
  const char* name;
};
constexpr std::array<Flag, 16> kFlags{{{STA_PLL, "PLL"},
                                       {STA_PPSFREQ, "PPSFREQ"},
                                       {STA_PPSTIME, "PPSTIME"},
                                       {STA_FLL, "FLL"},
                                       {STA_INS, "INS"},
                                       {STA_DEL, "DEL"},
                                       {STA_UNSYNC, "UNSYNC"},
                                       {STA_FREQHOLD, "FREQHOLD"},
                                       {STA_PPSSIGNAL, "PPSSIGNAL"},
                                       {STA_PPSJITTER, "PPSJITTER"},
                                       {STA_PPSWANDER, "PPSWANDER"},
                                       {STA_PPSERROR, "PPSERROR"},
                                       {STA_CLOCKERR, "CLOCKERR"},
                                       {STA_NANO, "NANO"},
                                       {STA_MODE, "MODE"},
                                       {STA_CLK, "CLK"}}};

// chronyc's CSV tracking line: reference id, name or address, stratum, ... ("" when chrony is absent).
std::string chrony_source() {
  std::error_code ec;
  if (!std::filesystem::exists(kChronyc, ec)) return "";
  const std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(kChronyTracking, "r"), &pclose);
  if (!pipe) return "";
  std::array<char, kMaxSourceBytes> line{};
  if (std::fgets(line.data(), static_cast<int>(line.size()), pipe.get()) == nullptr) return "";
  std::string text(line.data());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  // Keep reference id, name and stratum: the first three fields.
  std::size_t cut = 0;
  for (int field = 0; field < 3 && cut != std::string::npos; ++field) cut = text.find(',', cut == 0 ? 0 : cut + 1);
  return "chrony: " + text.substr(0, cut);
}

std::string ptp_devices() {
  std::error_code ec;
  std::string names;
  for (std::filesystem::directory_iterator it(kPtpDevices, ec), end; !ec && it != end; it.increment(ec))
    names += (names.empty() ? "" : ",") + it->path().filename().string();
  return names;
}

}  // namespace

HostClock read_host_clock() {
  HostClock c;
  timex tx{};  // modes 0: read only, allowed without privileges
  const int state = adjtimex(&tx);
  if (state >= 0) {
    c.known = true;
    c.state = state;
    c.status = static_cast<std::uint64_t>(static_cast<unsigned>(tx.status));
    c.est_error_us = tx.esterror;
    c.max_error_us = tx.maxerror;
    c.synchronised = state != TIME_ERROR && (tx.status & STA_UNSYNC) == 0;
    for (const Flag& f : kFlags)
      if ((tx.status & f.bit) != 0) c.status_text += (c.status_text.empty() ? "" : "|") + std::string(f.name);
  }
  std::error_code ec;
  c.source = chrony_source();
  if (c.source.empty() && std::filesystem::exists(kTimesyncdSynced, ec)) c.source = "systemd-timesyncd";
  if (const std::string ptp = ptp_devices(); !ptp.empty())
    c.source += (c.source.empty() ? "" : "; ") + std::string("ptp devices: ") + ptp;
  if (c.source.empty()) c.source = "unknown";
  return c;
}

ClockPair read_clock_pair() noexcept {
  // Monotonic on both sides of the realtime read: the pair is the realtime read and their midpoint.
  const std::int64_t before = core::monotonic_ns();
  const std::int64_t realtime = core::realtime_ns();
  const std::int64_t after = core::monotonic_ns();
  return ClockPair{static_cast<std::uint64_t>(realtime), static_cast<std::uint64_t>(before + (after - before) / 2)};
}

}  // namespace weir::rec
