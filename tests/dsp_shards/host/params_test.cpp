// Parameter resolution: every refusal names the shard, the parameter and the problem; what passes is
// handed to configure in declared order with defaults filled in.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "host_test_util.hpp"
#include "weir/shard_host/loader.hpp"
#include "weir/shard_host/params.hpp"

namespace {

using namespace weir::shard_host;
using weir::test::contains;

weir_shard* no_configure(weir_shard_config*, char*, size_t) { return nullptr; }
int no_process(weir_shard*, const weir_shard_block*, const weir_shard_host*) { return 0; }
void no_stop(weir_shard*) {}

const weir_shard_param kParams[] = {
    {"window", WEIR_PARAM_TEXT, 0, "hann", 0, 0, "hann|hamming|rect", "window function"},
    {"size", WEIR_PARAM_INT, 0, "1024", 16, 65536, nullptr, "FFT length"},
    {"overlap", WEIR_PARAM_REAL, 0, "0.5", 0, 0.95, nullptr, "fraction of overlap"},
    {"db", WEIR_PARAM_BOOL, 0, "no", 0, 0, nullptr, "output in dB"},
    {"threshold", WEIR_PARAM_REAL, 0, nullptr, 0, 0, nullptr, "required, any finite number"},
    {"floor", WEIR_PARAM_REAL, 0, "-1e300", -INFINITY, 0, nullptr, "open lower bound"},
};
const weir_shard_api kApi = {WEIR_SHARD_ABI_VERSION, sizeof(weir_shard_api), "demo", "", kParams,
                             sizeof(kParams) / sizeof(kParams[0]), 1U << WEIR_DTYPE_F32, &no_configure,
                             &no_process, &no_stop, nullptr, nullptr};

std::string refusal(const std::vector<ParamArg>& given) {
  auto r = resolve_params(kApi, "shard 'demo'", given);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().what, "shard 'demo'"));
  return r.error().what;
}

}  // namespace

TEST_SUITE("shard_host.params") {

TEST_CASE("defaults are filled in declared order and booleans are normalised") {
  REQUIRE(check_api(&kApi, "shard 'demo'"));
  auto r = resolve_params(kApi, "shard 'demo'", {{"threshold", "-3.5"}, {"db", "on"}, {"size", "+2048"}});
  REQUIRE(r);
  const ResolvedParams& p = **r;
  REQUIRE(p.size() == 6);
  CHECK(p.names() == std::vector<std::string>{"window", "size", "overlap", "db", "threshold", "floor"});
  CHECK(p.values() == std::vector<std::string>{"hann", "+2048", "0.5", "true", "-3.5", "-1e300"});
  CHECK(std::string(p.name_array()[4]) == "threshold");
  CHECK(std::string(p.value_array()[3]) == "true");
  REQUIRE(p.find("window") != nullptr);
  CHECK(*p.find("window") == "hann");
  CHECK(p.find("nope") == nullptr);
}

TEST_CASE("an unknown parameter is refused with a did-you-mean from the declared names") {
  const std::string what = refusal({{"threshold", "1"}, {"overlpa", "0.2"}});
  CHECK(contains(what, "unknown parameter 'overlpa'"));
  CHECK(contains(what, "did you mean 'overlap'?"));
  const std::string far = refusal({{"threshold", "1"}, {"zzzzzzzzzz", "1"}});
  CHECK_FALSE(contains(far, "did you mean"));
  CHECK(contains(far, "window, size, overlap, db, threshold, floor"));
}

TEST_CASE("a value that does not parse as its type is refused, naming value and parameter") {
  CHECK(contains(refusal({{"threshold", "1"}, {"size", "2.5"}}), "parameter 'size': '2.5' is not a whole number"));
  CHECK(contains(refusal({{"threshold", "1"}, {"size", "12abc"}}), "'12abc' is not a whole number"));
  CHECK(contains(refusal({{"threshold", "abc"}}), "parameter 'threshold': 'abc' is not a finite number"));
  CHECK(contains(refusal({{"threshold", "nan"}}), "'nan' is not a finite number"));
  CHECK(contains(refusal({{"threshold", "1e400"}}), "'1e400' is not a finite number"));
  CHECK(contains(refusal({{"threshold", ""}}), "'' is not a finite number"));
  CHECK(contains(refusal({{"threshold", "1"}, {"db", "maybe"}}), "parameter 'db': 'maybe' is not a boolean"));
}

TEST_CASE("a number outside [min, max] is refused with the range") {
  CHECK(contains(refusal({{"threshold", "1"}, {"size", "8"}}), "parameter 'size': 8 is out of range [16, 65536]"));
  CHECK(contains(refusal({{"threshold", "1"}, {"overlap", "0.99"}}), "0.99 is out of range [0, 0.95]"));
  CHECK(contains(refusal({{"threshold", "1"}, {"floor", "1"}}), "out of range [-inf, 0]"));
  CHECK(resolve_params(kApi, "shard 'demo'", {{"threshold", "1"}, {"size", "16"}, {"overlap", "0.95"}}));
  CHECK(resolve_params(kApi, "shard 'demo'", {{"threshold", "1e300"}, {"floor", "-1e308"}}));  // min = max = 0: no range
}

TEST_CASE("a text not among the choices is refused, listing them") {
  CHECK(contains(refusal({{"threshold", "1"}, {"window", "blackman"}}),
                 "parameter 'window': 'blackman' is not one of hann|hamming|rect"));
  CHECK(resolve_params(kApi, "shard 'demo'", {{"threshold", "1"}, {"window", "rect"}}));
}

TEST_CASE("a required parameter left out, or one given twice, is refused") {
  CHECK(contains(refusal({}), "parameter 'threshold' (real) is required: required, any finite number"));
  CHECK(contains(refusal({{"threshold", "1"}, {"threshold", "2"}}), "parameter 'threshold' given twice"));
}

TEST_CASE("a shard whose own default fails its check is refused") {
  const weir_shard_param bad[] = {{"size", WEIR_PARAM_INT, 0, "8", 16, 64, nullptr, ""}};
  weir_shard_api api = kApi;
  api.params = bad;
  api.param_count = 1;
  auto r = resolve_params(api, "shard 'demo'", {});
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().what, "declared default of parameter 'size': 8 is out of range [16, 64]"));
}

TEST_CASE("name=value arguments split at the first '='") {
  auto p = parse_param_arg("expr=x==1");
  REQUIRE(p);
  CHECK(p->first == "expr");
  CHECK(p->second == "x==1");
  auto empty = parse_param_arg("label=");
  REQUIRE(empty);
  CHECK(empty->second.empty());
  CHECK_FALSE(parse_param_arg("gain"));
  CHECK_FALSE(parse_param_arg("=2"));
}

TEST_CASE("the parameters of a shard object are checked the same way") {
  auto shard = load_shard(weir::test::test_shard("faulty"));
  REQUIRE(shard);
  auto missing = resolve_params(shard->api(), shard->what(), {});
  REQUIRE_FALSE(missing);
  CHECK(contains(missing.error().what, "libweir_test_shard_faulty.so"));
  CHECK(contains(missing.error().what, "parameter 'at' (int) is required"));
  auto range = resolve_params(shard->api(), shard->what(), {{"at", "1"}, {"ratio", "1.5"}});
  REQUIRE_FALSE(range);
  CHECK(contains(range.error().what, "parameter 'ratio': 1.5 is out of range [0, 1]"));
  CHECK(resolve_params(shard->api(), shard->what(), {{"at", "3"}, {"mode", "fail"}}));
}

}  // TEST_SUITE
