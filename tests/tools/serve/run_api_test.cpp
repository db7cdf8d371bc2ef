// The HTTP door into the runs without sockets: the bodies of /api/run/start and /stop read and
// refused by field, the statuses errors get, and a start and stop over a real arena with its gauges.
#include <doctest/doctest.h>

#include <string>

#include "arena_guard.hpp"
#include "run_api.hpp"
#include "scratch_dir.hpp"
#include "weir/core/clock.hpp"
#include "weir/runctl/doors.hpp"
#include "weir/serve/metrics.hpp"
#include "weir/serve/serve.hpp"

using namespace weir;
using weir::test::ArenaGuard;
using weir::test::ScratchDir;
using weir::test::unique_name;

namespace {

// The text of a refusal, or "" when it was accepted.
template <class T>
std::string refusal(const core::Result<T>& r) {
  return r ? std::string{} : r.error().what;
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_SUITE("serve.run") {

TEST_CASE("a start body gives the metadata and number, and is refused naming the field at fault") {
  auto ask = serve::parse_run_start(R"({"title": "cosmics", "operator": "Ada", "sample": "Si", "comment": "a\nb", "number": 7})");
  REQUIRE(ask);
  CHECK(ask->meta.title == "cosmics");
  CHECK(ask->meta.operator_name == "Ada");
  CHECK(ask->meta.sample == "Si");
  CHECK(ask->meta.comment == "a\nb");
  CHECK(ask->number == 7);
  auto empty = serve::parse_run_start("");
  REQUIRE(empty);
  CHECK(empty->number == 0);
  CHECK(empty->meta.title.empty());

  CHECK(contains(refusal(serve::parse_run_start("{not json")), "not JSON"));
  CHECK(contains(refusal(serve::parse_run_start("[1]")), "JSON object"));
  CHECK(contains(refusal(serve::parse_run_start(R"({"title": 5})")), "\"title\" must be a string"));
  CHECK(contains(refusal(serve::parse_run_start(R"({"number": -1})")), "\"number\" must be a positive integer"));
  CHECK(contains(refusal(serve::parse_run_start(R"({"number": 1.5})")), "\"number\""));
  CHECK(contains(refusal(serve::parse_run_start(R"({"titel": "x"})")), "unknown field \"titel\""));
  CHECK(contains(refusal(serve::parse_run_start(R"({"title": "ok", "sample": ")" "\xff\xfe" R"("})")),
                 "\"sample\" is not UTF-8"));
  CHECK(contains(refusal(serve::parse_run_start(R"({"operator": "\udc80"})")), "\"operator\" is not UTF-8"));
  CHECK(contains(refusal(serve::parse_run_start(R"({"comment": "a\u0001b"})")), "comment"));
  const std::string long_title = R"({"title": ")" + std::string(core::kRunTitleBytes + 1, 'x') + R"("})";
  CHECK(contains(refusal(serve::parse_run_start(long_title)), "run title"));
}

TEST_CASE("a stop body names the run to end (or none) and how long to wait for the recorders") {
  CHECK(serve::parse_run_stop("")->run == 0);
  CHECK(serve::parse_run_stop("{}")->wait_s == 0);
  auto ask = serve::parse_run_stop(R"({"run": 12, "wait_s": 2.5})");
  REQUIRE(ask);
  CHECK(ask->run == 12);
  CHECK(ask->wait_s == 2.5);
  CHECK(contains(refusal(serve::parse_run_stop(R"({"run": "12"})", "run abort")), "run abort: \"run\""));
  CHECK(contains(refusal(serve::parse_run_stop(R"({"wait_s": 0})")), "\"wait_s\""));
  CHECK(contains(refusal(serve::parse_run_stop(R"({"wait_s": 1e9})")), "\"wait_s\""));
  CHECK(contains(refusal(serve::parse_run_stop(R"({"number": 12})")), "unknown field \"number\""));
}

TEST_CASE("errors answer 400, 409, 503 or 500 by their code, as a JSON object") {
  CHECK(serve::run_error(core::Error{core::Errc::invalid_argument, "x"}).status == 400);
  CHECK(serve::run_error(core::Error{core::Errc::conflict, "x"}).status == 409);
  CHECK(serve::run_error(core::Error{core::Errc::busy, "x"}).status == 503);
  CHECK(serve::run_error(core::Error{core::Errc::io_error, "x"}).status == 500);
  CHECK(serve::run_error(403, "say \"no\"").body == R"({"error":"say \"no\""})");
}

TEST_CASE("control without a token is refused, naming both options") {
  serve::ServeOptions o;
  o.where = "x";
  o.allow_control = true;
  const auto refused = serve::check_options(o);
  REQUIRE_FALSE(refused);
  CHECK(contains(refused.error().what, "--allow-control"));
  CHECK(contains(refused.error().what, "--token"));
  o.token = "s3cret";
  CHECK(serve::check_options(o));
}

TEST_CASE("a start and a stop over a real arena show in the status and the run gauges") {
  const ArenaGuard guard(unique_name("runapi"));
  const ScratchDir dir("runapi");
  core::ArenaOptions o;
  o.slot_count = 64;
  o.vector_dim = 0;
  o.channel_capacity = 1;
  o.channel_data_bytes = 1ULL << 16;
  auto arena = core::Arena::create(guard.where(), o);
  REQUIRE(arena.has_value());
  std::string text = serve::prometheus_text(*arena, {});
  CHECK(contains(text, "\nweir_run_number 0\n"));
  CHECK(contains(text, "\nweir_run_state 0\n"));
  CHECK(contains(text, "\nweir_run_started_timestamp_seconds 0\n"));
  CHECK(serve::run_start(*arena, "{}").status == 409);  // no run directory yet
  REQUIRE(runctl::enable(*arena, dir.path()));

  const std::int64_t before = core::realtime_ns();
  const serve::RunAnswer started = serve::run_start(*arena, R"({"title": "first"})");
  REQUIRE_MESSAGE(started.status == 200, started.body);
  CHECK(contains(started.body, R"("state":"running","run":1,)"));
  CHECK(contains(started.body, R"("door":"http","title":"first")"));
  CHECK(contains(serve::run_status_json(*arena), R"("state":"running")"));
  const serve::RunAnswer again = serve::run_start(*arena, "{}");
  CHECK(again.status == 409);
  CHECK(contains(again.body, "run 1 (started by http) is running"));
  text = serve::prometheus_text(*arena, {});
  CHECK(contains(text, "# TYPE weir_run_number gauge\nweir_run_number 1\n"));
  CHECK(contains(text, "\nweir_run_state 1\n"));
  constexpr std::string_view kStarted = "\nweir_run_started_timestamp_seconds ";
  const std::size_t at = text.find(kStarted);
  REQUIRE(at != std::string::npos);
  const double started_s = std::stod(text.substr(at + kStarted.size()));
  CHECK(started_s >= static_cast<double>(before) / 1e9 - 1e-3);
  CHECK(started_s <= static_cast<double>(core::realtime_ns()) / 1e9 + 1e-3);

  CHECK(serve::run_stop(*arena, core::RunEnd::stopped, R"({"run": 2})").status == 409);  // not the one running
  const serve::RunAnswer stopped = serve::run_stop(*arena, core::RunEnd::stopped, R"({"run": 1})");
  REQUIRE_MESSAGE(stopped.status == 200, stopped.body);
  CHECK(contains(stopped.body, R"("run":1,)"));
  CHECK(contains(stopped.body, R"("ended":"stopped")"));
  CHECK(contains(stopped.body, R"("closed":true)"));
  CHECK(contains(serve::run_status_json(*arena), R"("state":"idle","run":1,)"));
  CHECK(serve::run_stop(*arena, core::RunEnd::aborted, "").status == 409);  // idle
  text = serve::prometheus_text(*arena, {});
  CHECK(contains(text, "\nweir_run_number 1\n"));
  CHECK(contains(text, "\nweir_run_state 0\n"));
}

}  // TEST_SUITE
