// The drivers' accounting keys in `weir serve`'s /metrics: a real `weir lua-driver` whose script
// fails on chosen calls leaves its <part>.accounting.<term> keys, `weir set` adds another part's,
// and a real `weir serve` exports them all as one counter family, sorted, read over loopback HTTP.
#include <doctest/doctest.h>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <string>

#include "background_weir.hpp"
#include "live_arena.hpp"
#include "run_weir.hpp"
#include "scratch_dir.hpp"
#include "spawn.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The samples of one family, in the order served.
std::string family_samples(const std::string& metrics, const std::string& name) {
  std::string out;
  std::size_t at = 0;
  while (at < metrics.size()) {
    const std::size_t end = metrics.find('\n', at);
    const std::string line = metrics.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.starts_with(name + "{")) out += line + "\n";
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

}  // namespace

TEST_SUITE("tools.metrics") {

TEST_CASE("every driver's accounting keys are one counter family in /metrics, one sample per part and term, sorted") {
  ScratchDir dir("drvmetrics");
  ScratchArena scratch("drvmetrics");
  const std::string arena = scratch.name();

  const std::string script = dir.file("dev.lua");
  std::ofstream(script) << "function acquire(n)\n  if n % 4 == 0 then error('no reply') end\n  return { v = n }\nend\n";
  const RunResult lua = run_weir({"lua-driver", arena, "--script", script, "--part", "dev", "--period", "0.01",
                                  "--channels", "v", "--calls", "12"});
  REQUIRE_MESSAGE(lua.exit_code == 0, lua.err);
  for (const auto& [key, value] : {std::pair{"dmm.accounting.timeout", "2"}, std::pair{"dmm.accounting.recorded", "40"},
                                   std::pair{"a.b.accounting.malformed", "1"}})
    REQUIRE(run_weir({"set", arena, key, value, "--type", "u64"}).exit_code == 0);
  REQUIRE(run_weir({"set", arena, "txt.accounting.timeout", "seven"}).exit_code == 0);   // not a counter: left out
  REQUIRE(run_weir({"set", arena, "odd.accounting.a.b", "3", "--type", "u64"}).exit_code == 0);  // not a term

  BackgroundWeir serve({"serve", arena, "--port", "0"});
  std::smatch port;
  const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)/");
  REQUIRE_MESSAGE(eventually([&] {
                    const std::string out = serve.output();
                    return std::regex_search(out, port, listening);
                  }, 20s),
                  serve.output());
  const std::string url = "http://127.0.0.1:" + port[1].str() + "/metrics";
  CapturedProcess py(command(WEIR_PYTHON, {"-c", "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('" +
                                                     url + "', timeout=5).read().decode())"}));
  const ExitStatus scraped = py.wait(20s);
  REQUIRE_MESSAGE((scraped.exited && scraped.code == 0), py.out());
  const std::string metrics = py.out();

  CHECK(occurrences(metrics, "# HELP weir_driver_accounting_total ") == 1);
  CHECK(occurrences(metrics, "# TYPE weir_driver_accounting_total counter\n") == 1);
  // Calls 4, 8 and 12 failed: 9 recorded, 3 driver errors, none late (a busy machine may add late
  // ticks; then the line says so and the sum still holds).
  const std::string samples = family_samples(metrics, "weir_driver_accounting_total");
  const std::string late = std::regex_replace(samples, std::regex(R"(term="late"\} [0-9]+)"), "term=\"late\"} L");
  CHECK_MESSAGE(late ==
                    "weir_driver_accounting_total{part=\"a.b\",term=\"malformed\"} 1\n"
                    "weir_driver_accounting_total{part=\"dev\",term=\"driver_error\"} 3\n"
                    "weir_driver_accounting_total{part=\"dev\",term=\"late\"} L\n"
                    "weir_driver_accounting_total{part=\"dev\",term=\"recorded\"} 9\n"
                    "weir_driver_accounting_total{part=\"dmm\",term=\"recorded\"} 40\n"
                    "weir_driver_accounting_total{part=\"dmm\",term=\"timeout\"} 2\n",
                metrics);
  REQUIRE(serve.signal(SIGINT));
  (void)serve.wait_exit(30s);
}

}  // TEST_SUITE
