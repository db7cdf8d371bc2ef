// The data-logger unit file in examples/systemd/ is valid for systemd (systemd-analyze verify), and
// the pipeline it starts passes `weir check`.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "run_weir.hpp"
#include "scratch_dir.hpp"

using weir::test::contains;
using weir::test::read_file;
using weir::test::run_weir;

namespace {

// Verifies a copy of the unit whose ExecStart names the weir just built (verify checks that the
// program exists) and whose name is free of this machine's units.
int verify(std::string unit) {
  const std::string installed = "/usr/local/bin/weir";
  for (std::size_t at; (at = unit.find(installed)) != std::string::npos;) unit.replace(at, installed.size(), WEIR_CLI_PATH);
  const std::string dir = "/tmp/weir-unit-" + std::to_string(::getpid());
  const std::string path = dir + "/weir-logger-test.service";
  std::system(("mkdir -p " + dir).c_str());
  std::ofstream(path) << unit;
  const int rc = std::system(("systemd-analyze verify " + path + " >" + dir + "/out 2>&1").c_str());
  std::fputs(read_file(dir + "/out").c_str(), stderr);
  std::system(("rm -rf " + dir).c_str());
  return rc;
}

}  // namespace

TEST_SUITE("examples.systemd") {

TEST_CASE("the logger unit verifies, and a broken copy of it does not") {
  const std::string unit = read_file(WEIR_SOURCE_DIR "/examples/systemd/weir-logger.service");
  REQUIRE(contains(unit, "ExecStart=/usr/local/bin/weir run /etc/weir/logger.lua"));
  // weir run speaks the notify protocol: systemd waits for READY=1 and watches the pings.
  CHECK(contains(unit, "\nType=notify\n"));
  CHECK(contains(unit, "\nNotifyAccess=main\n"));
  CHECK(contains(unit, "\nWatchdogSec="));
  if (std::system("command -v systemd-analyze >/dev/null 2>&1") != 0) {
    MESSAGE("SKIPPED LOUDLY: systemd-analyze is not installed (Debian: systemd): the unit was not verified");
    return;
  }
  CHECK(verify(unit) == 0);
  std::string broken = unit;
  broken.replace(broken.find("ExecStart="), 10, "ExecStrat=");
  CHECK(verify(broken) != 0);
}

TEST_CASE("the pipeline the unit runs passes weir check") {
  const auto r = run_weir({"check", WEIR_SOURCE_DIR "/examples/pipelines/slow_control.lua"});
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "ok: nothing started"));
}

}  // TEST_SUITE
