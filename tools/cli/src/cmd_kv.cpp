// Key-value commands: get, set, del, keys.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/arena_report.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/read_input.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::tools {
namespace {

using core::KvStatus;

// "[1024]" or "[3,4]": an array's dims as JSON.
std::string shape_json(const core::ArrayShape& shape) {
  JsonArray dims;
  for (std::uint32_t d = 0; d < shape.rank && d < shape.dims.size(); ++d) dims.number(shape.dims[d]);
  return dims.str();
}

// "array u32[1024]" for arrays, the type's name otherwise.
std::string type_text(const core::ValueInfo& info) {
  if (info.type == core::ValueType::array) return "array " + array_shape_text(info.array);
  return core::value_type_name(info.type);
}

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
  const bool array = info.type == core::ValueType::array;
  if (args.json) {
    JsonObject out;
    out.text("arena", args.where).text("key", args.key).text("type", core::value_type_name(info.type));
    if (array) out.text("dtype", core::dtype_name(info.array.elem)).raw("shape", shape_json(info.array));
    out.number("length", info.length)
        .number("epoch", info.epoch)
        .raw("value", array ? array_to_json(info.array, value) : value_to_json(info.type, value));
    print_json(out);
  } else {
    fmt::print("{}\n", array ? array_to_text(info.array, value) : value_to_text(info.type, value));
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
  std::string array_dtype;  // --array: element dtype of an array value
  std::string shape;        // --shape: N or RxC (with --array)
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
  const bool array = !args.array_dtype.empty();
  if (!array && !args.shape.empty()) return report_usage("--shape goes with --array DTYPE");
  const std::string default_type = args.hex ? "bytes" : "text";
  const auto type = array ? std::optional<core::ValueType>(core::ValueType::array)
                          : parse_value_type(args.type_name.empty() ? default_type : args.type_name);
  if (!type) return report_usage(fmt::format("unknown value type '{}'", args.type_name));

  std::string text = args.value;
  if (args.from_stdin) {
    auto input = read_all(stdin, "the value from stdin");
    if (!input) return report_error("", input.error());
    text = std::move(*input);
  }
  core::ValueInfo written;
  written.type = *type;
  core::Result<std::vector<std::byte>> bytes = std::vector<std::byte>{};
  if (array) {
    auto elem = core::parse_dtype(args.array_dtype);
    if (!elem) return report_usage(elem.error().what);
    auto encoded = encode_array(text, *elem, args.shape);
    if (!encoded) return report_usage(fmt::format("bad array for key '{}': {}", args.key, encoded.error().what));
    written.array = encoded->shape;
    bytes = std::move(encoded->bytes);
  } else {
    bytes = encode_value(text, *type, args.hex);
    if (!bytes) return report_usage(fmt::format("bad value for key '{}': {}", args.key, bytes.error().what));
  }

  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  core::KvStore kv(*arena);
  const KvStatus status =
      array ? kv.set_array(args.key, written.array, *bytes) : kv.set_wait(args.key, *bytes, *type);
  if (status != KvStatus::ok) return report_kv_failure(status, KeyContext{*arena, kv, args.key}, "set", bytes->size());
  if (args.json) {
    JsonObject out;
    out.text("arena", args.where).text("key", args.key).text("type", core::value_type_name(*type));
    if (array) out.text("dtype", core::dtype_name(written.array.elem)).raw("shape", shape_json(written.array));
    out.number("length", bytes->size());
    print_json(out);
  } else {
    fmt::print("set '{}' in {}: {}, {} bytes\n", args.key, arena->location().describe(), type_text(written),
               bytes->size());
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
  CLI::Option* type =
      sub->add_option("--type", args->type_name, "value type: text (default), bytes, i64, u64, f64")
          ->check(CLI::IsMember(std::vector<std::string>(std::begin(kSettableTypeNames), std::end(kSettableTypeNames))));
  CLI::Option* hex = sub->add_flag("--hex", args->hex, "VALUE is hex digits; stores bytes");
  sub->add_option("--array", args->array_dtype,
                  "store a typed array of this element dtype (i8 u8 i16 u16 i32 u32 i64 f32 f64 c64); VALUE is "
                  "its numbers separated by spaces or commas, e.g. --array u32 --shape 4 \"1 2 3 4\"")
      ->excludes(type)
      ->excludes(hex);
  sub->add_option("--shape", args->shape, "with --array: N or RxC (row-major); default: rank 1 of the numbers given");
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
      JsonObject item;
      item.text("key", row.key).text("type", core::value_type_name(row.info.type));
      if (row.info.type == core::ValueType::array)
        item.text("dtype", core::dtype_name(row.info.array.elem)).raw("shape", shape_json(row.info.array));
      item.number("length", row.info.length).number("epoch", row.info.epoch);
      list.raw(item.str());
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
  constexpr int kMinTypeWidth = 7;  // "vector " and the old fixed column
  constexpr int kLengthWidth = 10;
  std::size_t type_width = kMinTypeWidth;
  for (const KeyRow& row : rows) type_width = std::max(type_width, type_text(row.info).size() + kColumnGap);
  const int tw = static_cast<int>(type_width);
  fmt::print("{:<{}}{:<{}}{:<{}}{}\n", "KEY", width, "TYPE", tw, "LENGTH", kLengthWidth, "EPOCH");
  for (const KeyRow& row : rows) {
    fmt::print("{:<{}}{:<{}}{:<{}}{}\n", row.key, width, type_text(row.info), tw, row.info.length, kLengthWidth,
               row.info.epoch);
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
