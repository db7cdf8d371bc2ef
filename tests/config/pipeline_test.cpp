#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "weir/config/fields.hpp"
#include "weir/config/pipeline.hpp"

using namespace weir::config;

namespace {

constexpr const char* kExample = R"lua(arena { name = "bench1", slots = 1024, channels = 16, channel_mb = 64 }
for i = 0, 3 do
  channel ("adc" .. i) { dtype = "f32", rate = 1e6, block = 4096, units = "V", labels = {"adc"} }
end
driver "sim" { channels = {"adc0", "adc1", "adc2", "adc3"}, signal = "pulses", seed = 7 }
shard "fft" { input = "adc0", size = 4096, window = "hann", output = "adc0.psd" }
record "hdf5" { channels = {"adc*"}, out = "runs/", rotate_mb = 1024 }
)lua";

// A resolver standing in for the shard host: every shard makes one f32 channel "<output>".
ShardResolver one_output() {
  return [](const ShardDecl& s, const weir::core::ChannelSpec& in) -> weir::core::Result<std::vector<weir::core::ChannelSpec>> {
    weir::core::ChannelSpec out;
    out.name = s.output.empty() ? in.name + "." + s.kind : s.output;
    out.samples_per_block = in.samples_per_block / 2 + 1;
    out.rate_hz = in.rate_hz;
    return std::vector<weir::core::ChannelSpec>{out};
  };
}

std::string load_error(const std::string& text, const ShardResolver& resolver = one_output()) {
  auto p = load_pipeline_text(text, "pipe.lua");
  if (!p) return p.error().what;
  auto r = resolve(*p, resolver);
  if (!r) return r.error().what;
  return {};
}

}  // namespace

TEST_SUITE("config.pipeline") {

TEST_CASE("the plain example loads: a loop makes four channels, every part is there") {
  auto p = load_pipeline_text(kExample, "bench1.lua");
  REQUIRE_MESSAGE(p, (p ? "" : p.error().what));
  CHECK(p->arena.name == "bench1");
  CHECK(p->arena.options.slot_count == 1024);
  CHECK(p->arena.options.channel_capacity == 16);
  CHECK(p->arena.options.channel_data_bytes == 64ULL << 20);
  REQUIRE(p->channels.size() == 4);
  CHECK(p->channels[2].spec.name == "adc2");
  CHECK(p->channels[2].spec.rate_hz == 1e6);
  CHECK(p->channels[2].spec.labels == std::vector<std::string>{"adc"});
  CHECK(p->channels[2].origin.line == 3);
  REQUIRE(p->drivers.size() == 1);
  CHECK(p->drivers[0].params.at("signal") == "pulses");
  CHECK(p->drivers[0].params.at("seed") == "7");
  REQUIRE(p->shards.size() == 1);
  CHECK(p->shards[0].kind == "fft");
  CHECK(p->shards[0].name == "fft:adc0");
  CHECK(p->shards[0].params.at("window") == "hann");
  CHECK(p->shards[0].params.at("size") == "4096");
  CHECK(p->shards[0].origin.line == 6);
  REQUIRE(p->records.size() == 1);
  CHECK(p->records[0].out == "runs/");
  CHECK(p->records[0].params.at("rotate_mb") == "1024");
  CHECK(p->text == kExample);

  auto r = resolve(*p, one_output());
  REQUIRE_MESSAGE(r, (r ? "" : r.error().what));
  CHECK(r->channels.size() == 5);
  CHECK(r->channel_writer.at("adc0.psd") == "shard \"fft:adc0\"");
  CHECK(r->channel_writer.at("adc3") == "driver \"sim\"");
  CHECK(r->record_inputs.at("record") == std::vector<std::string>{"adc0", "adc1", "adc2", "adc3", "adc0.psd"});
  CHECK(r->arena_bytes > r->channel_bytes);
  const std::string text = describe(*p, *r);
  CHECK(text.find("adc0.psd") != std::string::npos);
  CHECK(text.find("shard \"fft:adc0\" (fft) thread   reads adc0 (lossy) -> adc0.psd") != std::string::npos);
}

TEST_CASE("a file on disk reports errors with its own path and line") {
  const std::string path = "/tmp/weir-config-test-" + std::to_string(::getpid()) + ".lua";
  {
    std::ofstream out(path);
    out << "arena { name = \"x\" }\n\nchannel \"a\" { rate = 1e3, dtyp = \"f32\" }\n";
  }
  auto p = load_pipeline(path);
  std::remove(path.c_str());
  REQUIRE(!p);
  CHECK(p.error().what == path + ":3: channel \"a\": unknown key 'dtyp' (did you mean 'dtype'?)");
  CHECK(!load_pipeline("/nonexistent/pipe.lua"));
}

TEST_CASE("every listed mistake comes back as file:line: what is wrong") {
  CHECK(load_error("arena { name = \"x\" }\nchannel \"a\" { rate = \"fast\" }") ==
        "pipe.lua:2: channel \"a\": 'rate' must be a number, not a string");
  CHECK(load_error("arena { name = \"x\", slots = 1.5 }") == "pipe.lua:1: arena: 'slots' must be a whole number, not 1.5");
  CHECK(load_error("arena { name = \"x\" }\nchannel \"a\" { rate = 1, dtype = \"f33\" }").find("pipe.lua:2: channel \"a\": ") == 0);
  CHECK(load_error("arena { name = \"x\" }\nchannel \"a\" { rate = 1e3 }\nshard \"fft\" { input = \"adc9\" }") ==
        "pipe.lua:3: shard \"fft:adc9\": input 'adc9' is no channel and no label of one; channels are: a");
  CHECK(load_error("arena { name = \"x\" }\nchannel \"adc0\" { rate = 1e3 }\nrecord \"hdf5\" { channels = {\"adx*\"}, out = \"r/\" }") ==
        "pipe.lua:3: record \"record\": pattern 'adx*' matches no channel; channels are: adc0");
  CHECK(load_error("arena { name = \"x\", channels = 1 }\nchannel \"a\" { rate = 1e3 }\nchannel \"b\" { rate = 1e3 }")
            .find("pipe.lua:1: the arena holds 1 channels but the pipeline makes 2 (a, b)") == 0);
  CHECK(load_error("arena { name = \"x\", channel_mb = 1 }\nchannel \"a\" { rate = 1e6, block = 65536, ring = 64 }")
            .find("pipe.lua:1: the channels' rings need ") == 0);
  CHECK(load_error("arena { name = \"x\" }\nchannel \"a\" { rate = 1e3 }\ndriver \"sim\" { channels = {\"a\"} }\n"
                   "driver \"sim\" { channels = {\"a\"}, name = \"sim2\" }") ==
        "pipe.lua:4: two writers for channel 'a': driver \"sim2\" and driver \"sim\" (pipe.lua:3)");
  CHECK(load_error("arena { name = \"x\" }\nchannel \"a\" { rate = 1e3 }\nchannel \"b\" { rate = 1e3 }\n"
                   "driver \"sim\" { channels = {\"a\", \"b\"} }\nshard \"fft\" { input = \"a\", output = \"b\" }") ==
        "pipe.lua:5: two writers for channel 'b': shard \"fft:a\" and driver \"sim\" (pipe.lua:4)");
}

TEST_CASE("unknown names, kinds and keys get a did-you-mean") {
  CHECK(load_error("arena { name = \"x\" }\nchanel \"a\" { rate = 1 }") ==
        "pipe.lua:2: unknown name 'chanel' (did you mean 'channel'?)");
  CHECK(load_error("arena { name = \"x\" }\ndriver \"sin\" { channels = {} }") ==
        "pipe.lua:2: unknown driver \"sin\" (did you mean 'sim'?); there are: sim, replay, udp, scpi, serial, lua, bridge, kafka, epics, tango");
  CHECK(load_error("arena { name = \"x\" }\nchannel \"a\" { rate = 1 }\ndriver \"sim\" { channels = {\"a\"}, sead = 3 }") ==
        "pipe.lua:3: driver \"sim\": unknown key 'sead' (did you mean 'seed'?)");
  CHECK(load_error("arena { name = \"x\" }\nchannel \"a\" { rate = 1 }\ndriver \"sim\" { channels = {\"b\"} }") ==
        "pipe.lua:3: driver \"sim\": channel 'b' is not declared (did you mean 'a'?)");
  CHECK(load_error("channel \"a\" { rate = 1 }") == "pipe.lua:1: no arena declared; start the file with arena { name = \"...\" }");
}

TEST_CASE("a driver that reads its own settings keeps them nested, and Fields reads them with file:line errors") {
  const std::string text = R"lua(arena { name = "x" }
channel "v" { rate = 2, block = 1 }
driver "scpi" { name = "dmm", channels = {"v"}, host = "127.0.0.1", port = 5025, init = {"*RST", "CONF:VOLT"},
  queries = { { send = "MEAS:VOLT?", every = 0.5, key = "dmm.volt" }, { send = "*IDN?", every = 10 } },
  serial = { baud = 9600, parity = "none" } }
)lua";
  auto p = load_pipeline_text(text, "pipe.lua");
  REQUIRE_MESSAGE(p, (p ? "" : p.error().what));
  REQUIRE(p->drivers.size() == 1);
  const DriverDecl& d = p->drivers[0];
  CHECK(d.kind == "scpi");
  CHECK(d.name == "dmm");
  CHECK(d.channels == std::vector<std::string>{"v"});
  CHECK(d.params.empty());
  CHECK(d.settings.count("channels") == 0);
  CHECK(d.settings.count("name") == 0);

  Fields f = driver_fields(d);
  CHECK(f.text("host").value() == "127.0.0.1");
  CHECK(f.integer("port", 1, 65535).value() == 5025);
  CHECK(f.list("init", true).value() == std::vector<std::string>{"*RST", "CONF:VOLT"});
  auto queries = f.items("queries", true);
  REQUIRE(queries);
  REQUIRE(queries->size() == 2);
  CHECK((*queries)[0].text("send").value() == "MEAS:VOLT?");
  CHECK((*queries)[0].number("every").value() == 0.5);
  CHECK((*queries)[0].text("key").value() == "dmm.volt");
  CHECK((*queries)[0].no_other_keys(std::array<const char*, 0>{}));
  auto missing = (*queries)[1].text("key");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().what == "pipe.lua:3: driver \"dmm\".queries[2]: 'key' is required");
  auto serial = f.table("serial", true);
  REQUIRE(serial);
  CHECK(serial->integer("baud", 50, 4000000).value() == 9600);
  auto stray = serial->no_other_keys(std::array{"baud", "stop_bits"});
  REQUIRE_FALSE(stray);
  CHECK(stray.error().what == "pipe.lua:3: driver \"dmm\".serial: unknown key 'parity'");
  CHECK(f.no_other_keys(std::array<const char*, 0>{}));
}

TEST_CASE("nested settings refuse what is not a value, with the path to it") {
  auto error_of = [](const std::string& body) {
    return load_error("arena { name = \"x\" }\nchannel \"v\" { rate = 1 }\ndriver \"lua\" { channels = {\"v\"}, " + body + " }");
  };
  CHECK(error_of("parse = function(s) return s end") ==
        "pipe.lua:3: driver \"lua\": 'parse' is a function; a pipeline's settings are values: put functions in a "
        "script file and name them (script = \"file.lua\")");
  CHECK(error_of("q = { { send = print } }") ==
        "pipe.lua:3: driver \"lua\": 'q[1].send' is a function; a pipeline's settings are values: put functions in a "
        "script file and name them (script = \"file.lua\")");
  CHECK(error_of("q = { [3] = 1 }") ==
        "pipe.lua:3: driver \"lua\": 'q' mixes a list with keys that are not names (a gap in the list, or a number as "
        "a key?)");
  CHECK(error_of("q = {{{{{{{{{1}}}}}}}}}") == "pipe.lua:3: driver \"lua\": 'q[1][1][1][1][1][1][1][1]' nests tables more than 8 deep");
  CHECK(error_of("q = 1, channels2 = 2").empty());
  // sim keeps flat parameters: a table of tables is refused there.
  CHECK(load_error("arena { name = \"x\" }\nchannel \"a\" { rate = 1 }\ndriver \"sim\" { channels = {\"a\"}, seed = {{1}} }") ==
        "pipe.lua:3: driver \"sim\": 'seed' must be a value or a list of names, not a table with tables or named "
        "entries in it");
  CHECK(load_error("arena { name = \"x\" }\nchannel \"a\" { rate = 1 }\ndriver \"udp\" { channels = {\"b\"} }") ==
        "pipe.lua:3: driver \"udp\": channel 'b' is not declared (did you mean 'a'?)");
}

TEST_CASE("Fields::items and Fields::table say what they expected") {
  std::map<std::string, Setting> values;
  Setting scalar;
  scalar.text = "x";
  values["a"] = scalar;
  Setting list;
  list.type = Setting::Type::table;
  list.items.push_back(scalar);
  values["b"] = list;
  Fields f("driver \"d\"", Origin{"f.lua", 7}, values);
  auto a = f.items("a", true);
  REQUIRE_FALSE(a);
  CHECK(a.error().what == "f.lua:7: driver \"d\": 'a' must be a list of tables { {...}, {...} }, not a string");
  auto b = f.items("b", true);
  REQUIRE_FALSE(b);
  CHECK(b.error().what == "f.lua:7: driver \"d\".b[1]: must be a table of name = value, not a string");
  auto c = f.table("c", false);
  REQUIRE(c);
  CHECK(c->what() == "driver \"d\".c");
  CHECK_FALSE(c->has("anything"));
}

TEST_CASE("the file runs restricted: no io, no os, no require, bounded memory and time") {
  CHECK(load_error("arena { name = \"x\" }\nio.open(\"/etc/passwd\")") ==
        "pipe.lua:2: 'io' is not available in a pipeline file");
  CHECK(load_error("os.execute(\"touch /tmp/pwned\")") == "pipe.lua:1: 'os' is not available in a pipeline file");
  CHECK(load_error("require \"socket\"") == "pipe.lua:1: 'require' is not available in a pipeline file");
  CHECK(load_error("load(\"return 1\")") == "pipe.lua:1: 'load' is not available in a pipeline file");
  CHECK(load_error("arena { name = \"x\" }\nlocal x = \n") .find("pipe.lua:3:") == 0);  // a syntax error names its line
  const std::string endless = load_error("arena { name = \"x\" }\nwhile true do end");
  CHECK(endless.find("pipe.lua:2: the file ran more than 50 million Lua instructions") == 0);
  const std::string bomb = load_error("local t = {}\nfor i = 1, 1e9 do t[i] = string.rep(\"x\", 1000) .. i end");
  CHECK(bomb == "pipe.lua: the file used more than 64 MiB of Lua memory while loading");
  LoadLimits small;
  small.instructions = 1'000'000;
  CHECK(!load_pipeline_text("arena { name = \"x\" }\nfor i = 1, 1e7 do end", "pipe.lua", small));
}

TEST_CASE("the channel pool: pool_mib as written, else sized from the channels with a quarter to spare") {
  const std::string big = "channel \"a\" { rate = 1e6, block = 65536, ring = 512 }\n";  // a 128 MiB ring
  auto given = load_pipeline_text("arena { name = \"x\", pool_mib = 200 }\n" + big, "pipe.lua");
  REQUIRE(given);
  CHECK(given->arena.pool_given);
  auto r = resolve(*given, one_output());
  REQUIRE(r);
  CHECK(r->pool_bytes == 200ULL << 20);

  auto sized = load_pipeline_text("arena { name = \"x\" }\n" + big, "pipe.lua");
  REQUIRE(sized);
  CHECK_FALSE(sized->arena.pool_given);
  auto s = resolve(*sized, one_output());
  REQUIRE(s);
  CHECK(s->channel_bytes > 128ULL << 20);
  CHECK(s->pool_bytes >= s->channel_bytes + s->channel_bytes / 4);
  CHECK(s->pool_bytes < s->channel_bytes + s->channel_bytes / 4 + (1ULL << 20));
  CHECK(s->pool_bytes % (1ULL << 20) == 0);
  CHECK(s->arena_bytes > s->pool_bytes);

  // A small pipeline keeps the pool an arena made by hand has: room for channels made while it runs.
  auto small = load_pipeline_text("arena { name = \"x\" }\nchannel \"a\" { rate = 1e3, block = 100 }\n", "pipe.lua");
  REQUIRE(small);
  auto t = resolve(*small, one_output());
  REQUIRE(t);
  CHECK(t->pool_bytes == weir::core::kDefaultChannelDataBytes);

  auto older = load_pipeline_text("arena { name = \"x\", channel_mb = 8 }", "pipe.lua");
  REQUIRE(older);
  CHECK(older->arena.pool_given);
  CHECK(older->arena.options.channel_data_bytes == 8ULL << 20);

  char need[160];
  std::snprintf(need, sizeof(need), "pipe.lua:1: the channels' rings need %.1f MiB but the arena's channel pool is 1.0 MiB; "
                "set pool_mib = %llu or more", static_cast<double>(s->channel_bytes) / 1048576.0,
                static_cast<unsigned long long>((s->channel_bytes + (1ULL << 20) - 1) >> 20));
  CHECK(load_error("arena { name = \"x\", pool_mib = 1 }\n" + big).find(need) == 0);
  CHECK(load_error("arena { name = \"x\", pool_mib = -3 }") ==
        "pipe.lua:1: arena: 'pool_mib' = -3 must be more than 0 and at most 1048576 (MiB)");
  CHECK(load_error("arena { name = \"x\", pool_mib = 4, channel_mb = 4 }") ==
        "pipe.lua:1: arena: 'pool_mib' and 'channel_mb' name the same channel pool; keep 'pool_mib'");
  // Under the 1 TiB arena limit, over what a test machine's memory holds.
  CHECK(load_error("arena { name = \"x\", pool_mib = 1040000 }").find("pipe.lua:1: the arena would take ") == 0);
}

TEST_CASE("glob patterns match channel names as a shell would") {
  CHECK(glob_match("adc*", "adc0"));
  CHECK(glob_match("adc?", "adc7"));
  CHECK(glob_match("adc[0-3]", "adc3"));
  CHECK_FALSE(glob_match("adc[0-3]", "adc4"));
  CHECK_FALSE(glob_match("adc*", "dac0"));
}

}  // TEST_SUITE

TEST_CASE("a bridge \"send\" keeps its settings, follows its patterns' channels and takes their consumer rows") {
  const std::string text = std::string(kExample) +
                           "bridge \"send\" { name = \"daq1\", channels = {\"adc[01]\", \"later*\"}, to = \"tcp://h:5600\",\n"
                           "  plain = true, hwm = 50 }\n";
  auto p = load_pipeline_text(text, "pipe.lua");
  REQUIRE(p);
  REQUIRE(p->bridges.size() == 1);
  const BridgeDecl& b = p->bridges[0];
  CHECK(b.kind == "send");
  CHECK(b.name == "daq1");
  CHECK(b.origin.where() == "pipe.lua:8");
  CHECK(b.channels == std::vector<std::string>{"adc[01]", "later*"});
  CHECK(b.settings.size() == 3);
  CHECK(b.settings.at("to").as_text() == "tcp://h:5600");
  CHECK(b.settings.at("hwm").integer == 50);
  auto without = load_pipeline_text(kExample, "pipe.lua");
  REQUIRE(without);
  auto r0 = resolve(*without, one_output());
  auto r = resolve(*p, one_output());
  REQUIRE(r0);
  REQUIRE(r);
  // A pattern matching nothing yet is no error: channels made later join the bridge.
  CHECK(r->bridge_inputs.at("daq1") == std::vector<std::string>{"adc0", "adc1"});
  CHECK(r->consumers_needed == r0->consumers_needed + 2);
  CHECK(describe(*p, *r).find("bridge \"daq1\" (send) process  reads adc0, adc1 (adc[01], later*)") != std::string::npos);

  CHECK(load_error(std::string(kExample) + "bridge \"recv\" { channels = {\"adc0\"} }\n") ==
        "pipe.lua:8: unknown bridge \"recv\"; there are: send");
  CHECK(load_error(std::string(kExample) + "bridge \"send\" { to = \"tcp://h:1\" }\n").find("pipe.lua:8: ") == 0);
  CHECK(load_error(std::string(kExample) + "bridge \"send\" { name = \"sim\", channels = {\"adc0\"} }\n")
            .find("two parts named 'sim'") != std::string::npos);
}

TEST_CASE("an ann part names its partition, keeps its settings as options, and needs an arena with vectors") {
  auto p = load_pipeline_text("arena { name = \"x\", vectors = 1000, vector_dim = 32 }\n"
                              "ann \"pulses\" { m = 12, ef = 80, metric = \"cosine\" }\n",
                              "pipe.lua");
  REQUIRE(p);
  REQUIRE(p->anns.size() == 1);
  CHECK(p->anns[0].part == "pulses");
  CHECK(p->anns[0].name == "ann:pulses");
  CHECK(p->anns[0].params == std::map<std::string, std::string>{{"ef", "80"}, {"m", "12"}, {"metric", "cosine"}});
  // `vectors = N` sizes the slot table by core's rule: N keys (and the service's own) fit.
  CHECK(p->arena.options.slot_count >= 1000 * 100 / 70);
  CHECK(p->arena.options.vector_dim == 32);
  auto r = resolve(*p, one_output());
  REQUIRE(r);
  CHECK(describe(*p, *r).find("ann \"ann:pulses\" process  indexes the vectors labelled pulses") != std::string::npos);

  CHECK(load_error("arena { name = \"x\" }\nann \"pulses\" { }\n") ==
        "pipe.lua:2: ann \"pulses\" indexes vectors, but the arena has none; give it vector_dim = D (the embedding's dims)");
  CHECK(load_error("arena { name = \"x\", vector_dim = 8 }\nann \"pulses\" { ef_search = 3 }\n")
            .find("pipe.lua:2: ann \"pulses\": unknown key 'ef_search'") == 0);
  CHECK(load_error("arena { name = \"x\", vectors = 10 }\n") == "pipe.lua:1: arena: 'vectors' needs 'vector_dim', the floats per vector");
  CHECK(load_error("arena { name = \"x\", vectors = 10, slots = 64, vector_dim = 8 }\n") ==
        "pipe.lua:1: arena: 'vectors' sizes the slot table itself; leave 'slots' out");
}

TEST_CASE("recorders are essential unless the file says otherwise; other parts only when it says so") {
  auto p = load_pipeline_text(R"lua(arena { name = "x" }
channel "a" { rate = 1000, block = 100 }
driver "sim" { channels = {"a"} }
driver "sim" { channels = {"a"}, name = "kept", essential = true }
record "hdf5" { channels = {"a"}, out = "runs/" }
record "hdf5" { channels = {"a"}, out = "more/", name = "spare", essential = false, restarts = 2 }
)lua",
                              "pipe.lua");
  REQUIRE(p);
  CHECK_FALSE(p->drivers[0].essential);
  CHECK(p->drivers[1].essential);
  CHECK(p->records[0].essential);
  CHECK_FALSE(p->records[1].essential);
  CHECK(p->records[1].max_restarts == 2);
  CHECK(load_error("arena { name = \"x\" }\nchannel \"a\" { rate = 1000 }\n"
                   "record \"hdf5\" { channels = {\"a\"}, out = \"r/\", essential = \"yes\" }\n") ==
        "pipe.lua:3: record \"hdf5\": 'essential' must be true or false, not a string");
}

TEST_CASE("a recorder setting the recorder does not have is refused with its name") {
  CHECK(load_error("arena { name = \"x\" }\nchannel \"a\" { rate = 1000 }\n"
                   "record \"hdf5\" { channels = {\"a\"}, out = \"r/\", snapshot_every = 5 }\n") ==
        "pipe.lua:3: record \"hdf5\": unknown key 'snapshot_every'");
  CHECK(load_error("arena { name = \"x\" }\nchannel \"a\" { rate = 1000 }\n"
                   "record \"hdf5\" { channels = {\"a\"}, out = \"r/\", min_free_mb = 64, compress = 4 }\n")
            .empty());
}
