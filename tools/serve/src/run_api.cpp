#include "run_api.hpp"

#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "weir/core/clock.hpp"
#include "weir/runctl/doors.hpp"
#include "weir/runctl/run_json.hpp"
#include "weir/tools/output.hpp"

namespace weir::serve {

using tools::JsonArray;
using tools::JsonObject;

namespace {

core::Result<nlohmann::json> parse_body(std::string_view verb, std::string_view body) {
  const auto bad = [&](const std::string& why) {
    return core::fail(core::Errc::invalid_argument, fmt::format("{}: {}", verb, why));
  };
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return nlohmann::json::object();
  // The last key read names the field when a string does not decode: the parser refuses bytes that
  // are not UTF-8 (and lone surrogates) before check_run_meta could see them.
  std::string last_key;
  const auto note_key = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (depth == 1 && event == nlohmann::json::parse_event_t::key && parsed.is_string()) last_key = parsed.get<std::string>();
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(body, note_key);
  } catch (const nlohmann::json::parse_error& e) {  // its text may quote the bad bytes: never echoed
    const std::string what = e.what();
    if (what.find("UTF-8") != std::string::npos || what.find("surrogate") != std::string::npos)
      return bad(last_key.empty() ? fmt::format("the body is not UTF-8 text (a bad sequence at byte {})", e.byte)
                                  : fmt::format("\"{}\" is not UTF-8 text", last_key));
    return bad(fmt::format("the body is not JSON (a syntax error at byte {})", e.byte));
  }
  if (!j.is_object()) return bad(fmt::format("the body must be a JSON object, not {}", j.type_name()));
  return j;
}

// A positive integer field, or 0 when absent.
core::Result<std::uint64_t> positive(std::string_view verb, const nlohmann::json& j, const char* name) {
  if (!j.contains(name)) return std::uint64_t{0};
  const nlohmann::json& v = j[name];
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0)
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("{}: \"{}\" must be a positive integer, not {}", verb, name, v.dump()));
  return v.get<std::uint64_t>();
}

}  // namespace

core::Result<RunStartAsk> parse_run_start(std::string_view body) {
  constexpr std::string_view kVerb = "run start";
  auto j = parse_body(kVerb, body);
  if (!j) return tl::make_unexpected(j.error());
  RunStartAsk ask;
  const std::array<std::pair<const char*, std::string*>, 4> texts{{{"title", &ask.meta.title},
                                                                   {"operator", &ask.meta.operator_name},
                                                                   {"sample", &ask.meta.sample},
                                                                   {"comment", &ask.meta.comment}}};
  for (const auto& [name, field] : j->items()) {
    if (name == "number") continue;
    const auto known = std::find_if(texts.begin(), texts.end(), [&](const auto& t) { return name == t.first; });
    if (known == texts.end())
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("{}: unknown field {} (title, operator, sample, comment, number)", kVerb,
                                    tools::json_quote(name)));
    if (!field.is_string())
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("{}: \"{}\" must be a string, not {}", kVerb, name, field.type_name()));
    *known->second = field.get<std::string>();
  }
  auto number = positive(kVerb, *j, "number");
  if (!number) return tl::make_unexpected(number.error());
  ask.number = *number;
  if (auto ok = core::check_run_meta(ask.meta); !ok)  // "run title: 300 bytes, longer than ..."
    return core::fail(core::Errc::invalid_argument, fmt::format("{}: {}", kVerb, ok.error().what));
  return ask;
}

core::Result<RunStopAsk> parse_run_stop(std::string_view body, std::string_view verb) {
  auto j = parse_body(verb, body);
  if (!j) return tl::make_unexpected(j.error());
  for (const auto& [name, field] : j->items())
    if (name != "run" && name != "wait_s")
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("{}: unknown field {} (run, wait_s)", verb, tools::json_quote(name)));
  RunStopAsk ask;
  auto run = positive(verb, *j, "run");
  if (!run) return tl::make_unexpected(run.error());
  ask.run = *run;
  if (j->contains("wait_s")) {
    const nlohmann::json& w = (*j)["wait_s"];
    if (!w.is_number() || !(w.get<double>() > 0 && w.get<double>() <= kMaxStopWaitS))
      return core::fail(core::Errc::invalid_argument,
                        fmt::format("{}: \"wait_s\" must be a number of seconds in (0, {}], not {}", verb,
                                    kMaxStopWaitS, w.dump()));
    ask.wait_s = w.get<double>();
  }
  return ask;
}

RunAnswer run_error(unsigned status, std::string_view what) {
  JsonObject o;
  o.text("error", what);
  return {status, o.str()};
}

RunAnswer run_error(const core::Error& error) {
  unsigned status = 500;
  switch (error.code) {
    case core::Errc::invalid_argument: status = 400; break;
    case core::Errc::conflict: status = 409; break;
    case core::Errc::busy: status = 503; break;
    case core::Errc::not_found:
    case core::Errc::already_exists:
    case core::Errc::permission_denied:
    case core::Errc::shm_unavailable:
    case core::Errc::layout_mismatch:
    case core::Errc::not_ready:
    case core::Errc::io_error: status = 500; break;
  }
  return run_error(status, error.what);
}

std::string run_status_json(const core::Arena& arena) {
  const core::RunControl rc(arena);
  return runctl::status_json(rc.status(), rc.recorders()).str();
}

RunAnswer run_start(const core::Arena& arena, std::string_view body) {
  auto ask = parse_run_start(body);
  if (!ask) return run_error(ask.error());
  auto started = runctl::start_run(arena, ask->meta, kHttpDoor, ask->number);
  if (!started) return run_error(started.error());
  return {200, runctl::status_json(*started, core::RunControl(arena).recorders()).str()};
}

RunAnswer run_stop(const core::Arena& arena, core::RunEnd how, std::string_view body) {
  auto ask = parse_run_stop(body, how == core::RunEnd::aborted ? "run abort" : "run stop");
  if (!ask) return run_error(ask.error());
  const std::int64_t wait_ns =
      ask->wait_s > 0 ? static_cast<std::int64_t>(ask->wait_s * 1e9) : runctl::kDefaultCloseWaitNs;
  auto stopped = runctl::stop_run(arena, kHttpDoor, how, ask->run, wait_ns);
  if (!stopped) return run_error(stopped.error());
  JsonArray late;
  for (const std::uint32_t pid : stopped->late) late.number(pid);
  JsonObject o = runctl::row_json(stopped->row);
  o.boolean("closed", stopped->closed).raw("late", late.str());
  return {200, o.str()};
}

}  // namespace weir::serve
