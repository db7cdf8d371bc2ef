// Key-value commands: get, set, del, keys.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/arena_report.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/read_input.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::tools {
namespace {

using core::KvStatus;

// ---- get ----

struct GetArgs {
  std::string where;
  std::string key;
  bool json = false;
  bool raw = false;
};

int run_get(const GetArgs& args) {
  auto arena = open_arena(args.where, Access::prefer_write);
  if (!arena) return kExitError;
  const core::KvStore kv(*arena);
  std::vector<std::byte> buffer(kv.value_bytes());
  core::ValueInfo info;
  if (const KvStatus status = kv.get(args.key, buffer, info); status != KvStatus::ok) {
    return report_kv_failure(status, KeyContext{*arena, kv, args.key}, "read");
  }
  const std::span<const std::byte> value(buffer.data(), std::min<std::size_t>(info.length, buffer.size()));
  if (args.raw) {
    if (std::fwrite(value.data(), 1, value.size(), stdout) != value.size()) {
      print_error(fmt::format("cannot write the value of key '{}' to stdout", args.key));
      return kExitError;
    }
    return kExitOk;
  }
  if (args.json) {
    JsonObject out;
    out.text("arena", args.where)
        .text("key", args.key)
        .text("type", core::value_type_name(info.type))
        .number("length", info.length)
        .number("epoch", info.epoch)
        .raw("value", value_to_json(info.type, value));
    print_json(out);
  } else {
    fmt::print("{}\n", value_to_text(info.type, value));
  }
  return kExitOk;
}

void add_get(CLI::App& app, Action& action) {
  auto args = std::make_shared<GetArgs>();
  CLI::App* sub = app.add_subcommand(
      "get", "Print a key's value: text as text, integers and floats as numbers, bytes as hex");
  add_name_option(*sub, args->where);
  add_key_option(*sub, args->key);
  CLI::Option* json = add_json_flag(*sub, args->json);
  sub->add_flag("--raw", args->raw, "write the stored bytes exactly, with no newline")->excludes(json);
  bind_action(*sub, action, args, &run_get);
}

// ---- set ----

struct SetArgs {
  std::string where;
  std::string key;
  std::string value;
  std::string type_name;  // empty: text, or bytes with --hex
  const CLI::Option* value_option = nullptr;  // owned by the app, which outlives the action
  bool hex = false;
  bool from_stdin = false;
  bool json = false;
};

int run_set(const SetArgs& args) {
  const bool has_value = args.value_option->count() > 0;  // "" is a valid (empty) value
  if (args.from_stdin == has_value) {
    if (!args.from_stdin) return report_usage("set needs a VALUE or --stdin");
    return report_usage("set takes either VALUE or --stdin, not both");
  }
  const std::string default_type = args.hex ? "bytes" : "text";
  const auto type = parse_value_type(args.type_name.empty() ? default_type : args.type_name);
  if (!type) return report_usage(fmt::format("unknown value type '{}'", args.type_name));

  std::string text = args.value;
  if (args.from_stdin) {
    auto input = read_all(stdin, "the value from stdin");
    if (!input) return report_error("", input.error());
    text = std::move(*input);
  }
  auto bytes = encode_value(text, *type, args.hex);
  if (!bytes) return report_usage(fmt::format("bad value for key '{}': {}", args.key, bytes.error().what));

  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  core::KvStore kv(*arena);
  if (const KvStatus status = kv.set_wait(args.key, *bytes, *type); status != KvStatus::ok) {
    return report_kv_failure(status, KeyContext{*arena, kv, args.key}, "set", bytes->size());
  }
  if (args.json) {
    JsonObject out;
    out.text("arena", args.where)
        .text("key", args.key)
        .text("type", core::value_type_name(*type))
        .number("length", bytes->size());
    print_json(out);
  } else {
    fmt::print("set '{}' in {}: {}, {} bytes\n", args.key, arena->location().describe(),
               core::value_type_name(*type), bytes->size());
  }
  return kExitOk;
}

void add_set(CLI::App& app, Action& action) {
  auto args = std::make_shared<SetArgs>();
  CLI::App* sub = app.add_subcommand("set", "Write a key's value, creating the key if needed");
  add_name_option(*sub, args->where);
  add_key_option(*sub, args->key);
  CLI::Option* value = sub->add_option("VALUE", args->value, "the value (omit with --stdin)");
  args->value_option = value;
  sub->add_option("--type", args->type_name, "value type: text (default), bytes, i64, u64, f64")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(kSettableTypeNames), std::end(kSettableTypeNames))));
  sub->add_flag("--hex", args->hex, "VALUE is hex digits; stores bytes");
  sub->add_flag("--stdin", args->from_stdin, "read the value from stdin, verbatim")->excludes(value);
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_set);
}

// ---- del ----

struct DelArgs {
  std::string where;
  std::string key;
  bool json = false;
};

int run_del(const DelArgs& args) {
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  core::KvStore kv(*arena);
  if (const KvStatus status = kv.del(args.key); status != KvStatus::ok) {
    return report_kv_failure(status, KeyContext{*arena, kv, args.key}, "delete");
  }
  if (args.json) {
    print_json(JsonObject{}.text("arena", args.where).text("deleted", args.key));
  } else {
    fmt::print("deleted '{}' from {}\n", args.key, arena->location().describe());
  }
  return kExitOk;
}

void add_del(CLI::App& app, Action& action) {
  auto args = std::make_shared<DelArgs>();
  CLI::App* sub = app.add_subcommand("del", "Delete a key");
  add_name_option(*sub, args->where);
  add_key_option(*sub, args->key);
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_del);
}

// ---- keys ----

struct KeysArgs {
  std::string where;
  bool json = false;
};

struct KeyRow {
  std::string key;
  core::ValueInfo info;
};

int run_keys(const KeysArgs& args) {
  auto arena = open_arena(args.where, Access::read_only);
  if (!arena) return kExitError;
  const core::KvStore kv(*arena);
  std::vector<KeyRow> rows;
  kv.for_each_key([&rows](std::string_view key, const core::ValueInfo& info) {
    rows.push_back({std::string(key), info});
  });
  std::sort(rows.begin(), rows.end(), [](const KeyRow& a, const KeyRow& b) { return a.key < b.key; });

  if (args.json) {
    JsonArray list;
    for (const KeyRow& row : rows) {
      list.raw(JsonObject{}
                   .text("key", row.key)
                   .text("type", core::value_type_name(row.info.type))
                   .number("length", row.info.length)
                   .number("epoch", row.info.epoch)
                   .str());
    }
    print_json(JsonObject{}.text("arena", args.where).number("count", rows.size()).raw("keys", list.str()));
    return kExitOk;
  }
  if (rows.empty()) {
    fmt::print("no keys in {}\n", arena->location().describe());
    return kExitOk;
  }
  std::size_t key_width = std::string_view{"KEY"}.size();
  for (const KeyRow& row : rows) key_width = std::max(key_width, row.key.size());
  const int width = static_cast<int>(key_width) + kColumnGap;
  constexpr int kTypeWidth = 7;
  constexpr int kLengthWidth = 10;
  fmt::print("{:<{}}{:<{}}{:<{}}{}\n", "KEY", width, "TYPE", kTypeWidth, "LENGTH", kLengthWidth, "EPOCH");
  for (const KeyRow& row : rows) {
    fmt::print("{:<{}}{:<{}}{:<{}}{}\n", row.key, width, core::value_type_name(row.info.type), kTypeWidth,
               row.info.length, kLengthWidth, row.info.epoch);
  }
  return kExitOk;
}

void add_keys(CLI::App& app, Action& action) {
  auto args = std::make_shared<KeysArgs>();
  CLI::App* sub = app.add_subcommand("keys", "List live keys with type, length and epoch, sorted by key");
  add_name_option(*sub, args->where);
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_keys);
}

}  // namespace

void add_kv_commands(CLI::App& app, Action& action) {
  add_get(app, action);
  add_set(app, action);
  add_del(app, action);
  add_keys(app, action);
}

}  // namespace weir::tools
