// The loader refuses every broken shard with a message naming it and the defect, and accepts the
// built-ins and a good shared object through the very same checks.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "host_test_util.hpp"
#include "live_arena.hpp"
#include "weir/shard_host/builtin.hpp"
#include "weir/shard_host/loader.hpp"

namespace {

using namespace weir::shard_host;
using weir::test::contains;
using weir::test::test_shard;

std::string refusal(const std::string& kind_or_path) {
  auto r = load_shard(kind_or_path);
  REQUIRE_FALSE(r);
  return r.error().what;
}

weir_shard* configure(weir_shard_config*, char*, size_t) { return nullptr; }
int process(weir_shard*, const weir_shard_block*, const weir_shard_host*) { return 0; }
void stop(weir_shard*) {}
const weir_shard_api kGood = {WEIR_SHARD_ABI_VERSION, sizeof(weir_shard_api), "good", "", nullptr, 0,
                              1U << WEIR_DTYPE_F32, &configure, &process, &stop, nullptr, nullptr};

}  // namespace

TEST_SUITE("shard_host.loader") {

TEST_CASE("built-in kinds load through the same checks and unknown kinds get a suggestion") {
  REQUIRE(find_builtin("null") != nullptr);
  REQUIRE(find_builtin("copy") != nullptr);
  for (const BuiltinKind& k : builtin_kinds()) {
    auto shard = load_shard(k.name);
    REQUIRE_MESSAGE(shard, k.name);
    CHECK(shard->builtin());
    CHECK(shard->kind() == k.name);
    CHECK(shard->what() == "shard '" + std::string(k.name) + "'");
  }
  const std::string what = refusal("nul");
  CHECK(contains(what, "unknown shard kind 'nul': did you mean 'null'?"));
  CHECK(contains(what, "built-in kinds: null, copy"));
}

TEST_CASE("a path or a .so name is a shared object, anything else a kind") {
  CHECK(names_shard_file("./x"));
  CHECK(names_shard_file("/opt/shards/libfft.so"));
  CHECK(names_shard_file("libgain.so"));
  CHECK_FALSE(names_shard_file("fft"));
  CHECK_FALSE(names_shard_file(".so"));
}

TEST_CASE("a shared object that cannot be opened is refused with the dlopen error") {
  const std::string missing = refusal("/nonexistent/libnothing.so");
  CHECK(contains(missing, "shard '/nonexistent/libnothing.so': dlopen failed: "));
  CHECK(contains(missing, "No such file"));

  char path[] = "/tmp/weir-not-elf-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, "not a shared object\n", 20) == 20);
  close(fd);
  const std::string not_elf = refusal(path);
  unlink(path);
  CHECK(contains(not_elf, std::string("shard '") + path + "': dlopen failed: "));
  CHECK((contains(not_elf, "invalid ELF header") || contains(not_elf, "too short")));
}

TEST_CASE("a shared object without the entry symbol is refused") {
  const std::string what = refusal(test_shard("no_entry"));
  CHECK(contains(what, "libweir_test_shard_no_entry.so"));
  CHECK(contains(what, "no entry symbol 'weir_shard_entry'"));
}

TEST_CASE("an entry function that returns no table is refused") {
  const std::string what = refusal(test_shard("null_table"));
  CHECK(contains(what, "libweir_test_shard_null_table.so"));
  CHECK(contains(what, "returned no table (NULL)"));
}

TEST_CASE("a shard built for another ABI version is refused, naming both versions") {
  const std::string what = refusal(test_shard("abi"));
  CHECK(contains(what, "libweir_test_shard_abi.so"));
  CHECK(contains(what, "built for shard ABI version 99, but this host speaks versions 2 to 3"));
}

TEST_CASE("a shard built for ABI version 1 is refused with what changed and what to do") {
  const std::string what = refusal(test_shard("abi1"));
  CHECK(contains(what, "libweir_test_shard_abi1.so"));
  CHECK(contains(what, "built for shard ABI version 1, but this host speaks versions 2 to 3"));
  CHECK(contains(what, "frame shapes and array keys"));
  CHECK(contains(what, "rebuild it against this weir's weir/shard.h"));
}

TEST_CASE("a shard whose table has another size is refused, naming both sizes") {
  const std::string what = refusal(test_shard("size"));
  const std::string host = std::to_string(sizeof(weir_shard_api));
  const std::string shard = std::to_string(sizeof(weir_shard_api) + 8);
  CHECK(contains(what, "libweir_test_shard_size.so"));
  CHECK(contains(what, "its weir_shard_api is " + shard + " bytes, but this host's is " + host));
}

TEST_CASE("version 2 tables, with or without flush, are accepted and their missing fields never read") {
  const auto flush = [](weir_shard*, const weir_shard_host*) { return 0; };
  const auto idle = [](weir_shard*, const weir_shard_host*, std::uint32_t) { return 0; };
  weir_shard_api legacy = kGood;  // a shard built before flush existed: the table ends at stop
  legacy.abi_version = 2;
  legacy.struct_size = WEIR_SHARD_API_V2_SIZE;
  legacy.flush = flush;  // past its end: ignored
  legacy.idle = idle;
  CHECK(check_api(&legacy, "shard 'old'"));
  CHECK((shard_flush(legacy) == nullptr));
  CHECK((shard_idle(legacy) == nullptr));
  legacy.struct_size = WEIR_SHARD_API_V2_MAX_SIZE;  // the last version 2 tables: flush, no idle
  CHECK(check_api(&legacy, "shard 'old'"));
  CHECK((shard_flush(legacy) == flush));
  CHECK((shard_idle(legacy) == nullptr));
  weir_shard_api current = kGood;
  current.flush = flush;
  current.idle = idle;
  CHECK(check_api(&current, "shard 'new'"));
  CHECK((shard_flush(current) == flush));
  CHECK((shard_idle(current) == idle));

  weir_shard_api short_table = kGood;
  short_table.abi_version = 2;
  short_table.struct_size = WEIR_SHARD_API_V2_SIZE - 8;
  auto refused = check_api(&short_table, "shard 'x'");
  REQUIRE_FALSE(refused);
  CHECK(contains(refused.error().what, "its weir_shard_api is 56 bytes, but this host's is 80 (for ABI version 2 it "
                                       "accepts 64 to 72"));
  weir_shard_api v3_without_idle = kGood;  // version 3 tables have idle
  v3_without_idle.struct_size = WEIR_SHARD_API_V2_MAX_SIZE;
  refused = check_api(&v3_without_idle, "shard 'x'");
  REQUIRE_FALSE(refused);
  CHECK(contains(refused.error().what, "its weir_shard_api is 72 bytes, but this host's is 80 (for ABI version 3 it "
                                       "accepts 80 to 80"));
}

TEST_CASE("a version 2 shared object is loaded and configured with the version 2 config it knows") {
  auto shard = load_shard(test_shard("v2"));
  REQUIRE_MESSAGE(shard, (shard ? "" : shard.error().what));
  CHECK(shard->api().abi_version == 2);
  CHECK(shard->api().struct_size == WEIR_SHARD_API_V2_MAX_SIZE);
  weir::test::ScratchArena scratch("shardv2");
  weir::test::make_channel(scratch.arena(), "adc0", weir::core::Dtype::f32, 64, 1000.0);
  const auto r = weir::test::run_weir_once({"shard", scratch.name(), test_shard("v2"), "--input", "adc0"});
  CHECK(r.status.code == weir::test::kExitError);
  CHECK(contains(r.err, "a version 2 shard saw config version 2 of 11608 bytes"));
}

TEST_CASE("a plugin kind is looked up in $WEIR_SHARD_PATH, beside the executable and installed, and its absence explained") {
  const PluginKind* embed = find_plugin("embed");
  REQUIRE(embed != nullptr);
  CHECK(embed->file == "libweir_shard_embed.so");
  CHECK(find_builtin("embed") == nullptr);
  REQUIRE(setenv("WEIR_SHARD_PATH", "/nonexistent/a::/nonexistent/b", 1) == 0);
  const auto dirs = plugin_dirs();
  REQUIRE(dirs.size() == 4);
  CHECK(dirs[0] == "/nonexistent/a");
  CHECK(dirs[1] == "/nonexistent/b");
  CHECK(dirs[2].find("tests") != std::string::npos);  // this test executable's directory
  // None of them holds the plugin (the build puts it beside build/tools/weir).
  const std::string what = refusal("embed");
  unsetenv("WEIR_SHARD_PATH");
  CHECK(contains(what, "shard 'embed': the kind is a plugin, libweir_shard_embed.so, found in none of /nonexistent/a, "
                       "/nonexistent/b, " + dirs[2] + ", " + dirs[3]));
  CHECK(contains(what, "built only where libtorch"));
}

TEST_CASE("a table with a NULL function is refused") {
  CHECK(contains(refusal(test_shard("null_process")), "process is NULL"));
  weir_shard_api api = kGood;
  api.configure = nullptr;
  CHECK(contains(check_api(&api, "shard 'x'").error().what, "shard 'x': configure is NULL"));
  api = kGood;
  api.stop = nullptr;
  CHECK(contains(check_api(&api, "shard 'x'").error().what, "stop is NULL"));
}

TEST_CASE("malformed tables are refused: no name, no input dtype, a missing or bad parameter table") {
  CHECK(check_api(&kGood, "shard 'good'"));
  CHECK(contains(check_api(nullptr, "shard 'x'").error().what, "no shard table"));
  weir_shard_api api = kGood;
  api.name = "";
  CHECK(contains(check_api(&api, "shard 'x'").error().what, "has no name"));
  api = kGood;
  api.input_dtypes = 0;
  CHECK(contains(check_api(&api, "shard 'x'").error().what, "accepts no known input dtype"));
  api = kGood;
  api.param_count = 2;
  CHECK(contains(check_api(&api, "shard 'x'").error().what, "declares 2 parameters but the table is NULL"));
  const weir_shard_param twice[] = {{"a", WEIR_PARAM_INT, 0, "1", 0, 0, nullptr, ""},
                                    {"a", WEIR_PARAM_INT, 0, "1", 0, 0, nullptr, ""}};
  api.params = twice;
  CHECK(contains(check_api(&api, "shard 'x'").error().what, "parameter 'a' is declared twice"));
  const weir_shard_param untyped[] = {{"a", 7, 0, "1", 0, 0, nullptr, ""}};
  api.params = untyped;
  api.param_count = 1;
  CHECK(contains(check_api(&api, "shard 'x'").error().what, "parameter 'a' has unknown type 7"));
}

TEST_CASE("a good shared object loads and reports what it accepts") {
  auto shard = load_shard(test_shard("faulty"));
  REQUIRE(shard);
  CHECK_FALSE(shard->builtin());
  CHECK(shard->kind() == "faulty");
  CHECK(dtype_list(shard->api().input_dtypes) == "f32");
  CHECK(dtype_list((1U << WEIR_DTYPE_I16) | (1U << WEIR_DTYPE_F64)) == "i16, f64");
  LoadedShard moved = std::move(*shard);  // the handle moves with it; only one dlclose
  CHECK(moved.kind() == "faulty");
}

}  // TEST_SUITE
