// Atomic integer commands: incr, decr, and, or, xor, not. Each prints the key's new value.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "command.hpp"
#include "weir/core/kv_store.hpp"
#include "weir/tools/arena_access.hpp"
#include "weir/tools/output.hpp"
#include "weir/tools/value_codec.hpp"

namespace weir::tools {
namespace {

using core::AtomicOp;
using core::KvStatus;

enum class OperandKind : std::uint8_t {
  none,   // not: no operand
  delta,  // incr: optional signed DELTA, default 1
  minus,  // decr: optional signed DELTA, default 1, subtracted
  bits,   // and, or, xor: required OPERAND, decimal or 0x hex
};

constexpr std::string_view kDefaultDelta = "1";

struct AtomicArgs {
  std::string where;
  std::string key;
  std::string operand = std::string{kDefaultDelta};
  std::string verb;
  AtomicOp op = AtomicOp::add;
  OperandKind kind = OperandKind::none;
  bool json = false;
};

// The operand as the add or bitwise op takes it; the CLI checks already refused unparsable text.
std::uint64_t operand_bits(const AtomicArgs& args) {
  switch (args.kind) {
    case OperandKind::none: return 0;
    case OperandKind::delta: return static_cast<std::uint64_t>(parse_i64(args.operand).value_or(0));
    case OperandKind::minus: return 0 - static_cast<std::uint64_t>(parse_i64(args.operand).value_or(0));
    case OperandKind::bits: return parse_operand(args.operand).value_or(0);
  }
  return 0;
}

int run_atomic(const AtomicArgs& args) {
  auto arena = open_arena(args.where, Access::read_write);
  if (!arena) return kExitError;
  core::KvStore kv(*arena);
  std::uint64_t result = 0;
  if (const KvStatus status = kv.atomic(args.key, args.op, operand_bits(args), result); status != KvStatus::ok) {
    return report_kv_failure(status, KeyContext{*arena, kv, args.key}, args.verb);
  }
  // The op returns bits; the key's type says whether they are signed. A missing key became i64.
  std::uint64_t ignored = 0;
  core::ValueType type = core::ValueType::i64;
  if (kv.get_scalar(args.key, ignored, type) != KvStatus::ok) type = core::ValueType::i64;
  const std::string value = integer_to_text(type, result);
  if (args.json) {
    print_json(JsonObject{}
                   .text("arena", args.where)
                   .text("key", args.key)
                   .text("type", core::value_type_name(type))
                   .raw("value", value));
  } else {
    fmt::print("{}\n", value);
  }
  return kExitOk;
}

CLI::Validator integer_check(bool (*accepts)(std::string_view), std::string_view what) {
  return CLI::Validator(
      [accepts, what](const std::string& text) {
        return accepts(text) ? std::string{} : fmt::format("'{}' is not {}", text, what);
      },
      "INT");
}

bool is_i64(std::string_view text) { return parse_i64(text).has_value(); }
bool is_operand(std::string_view text) { return parse_operand(text).has_value(); }

struct AtomicCommand {
  std::string_view name;
  std::string_view verb;  // for "cannot <verb> key 'k' ..."
  std::string_view description;
  AtomicOp op;
  OperandKind kind;
};

constexpr AtomicCommand kAtomicCommands[] = {
    {"incr", "increment", "Atomically add DELTA (default 1) to an integer key", AtomicOp::add, OperandKind::delta},
    {"decr", "decrement", "Atomically subtract DELTA (default 1) from an integer key", AtomicOp::add,
     OperandKind::minus},
    {"and", "AND into", "Atomically AND an integer key with OPERAND", AtomicOp::bit_and, OperandKind::bits},
    {"or", "OR into", "Atomically OR an integer key with OPERAND", AtomicOp::bit_or, OperandKind::bits},
    {"xor", "XOR into", "Atomically XOR an integer key with OPERAND", AtomicOp::bit_xor, OperandKind::bits},
    {"not", "invert", "Atomically invert every bit of an integer key", AtomicOp::bit_not, OperandKind::none},
};

void add_atomic(CLI::App& app, Action& action, const AtomicCommand& command) {
  const OperandKind kind = command.kind;
  auto args = std::make_shared<AtomicArgs>();
  args->verb = std::string(command.verb);
  args->op = command.op;
  args->kind = kind;
  CLI::App* sub = app.add_subcommand(std::string(command.name), std::string(command.description));
  add_name_option(*sub, args->where);
  sub->add_option("KEY", args->key, "key name (a missing key starts at 0 as i64)")->required();
  switch (kind) {
    case OperandKind::none: break;
    case OperandKind::delta:
    case OperandKind::minus:
      sub->add_option("DELTA", args->operand, "signed amount, decimal or 0x hex")
          ->capture_default_str()
          ->check(integer_check(&is_i64, "a signed 64-bit integer"));
      break;
    case OperandKind::bits:
      sub->add_option("OPERAND", args->operand, "decimal or 0x hex; negative decimals as two's complement")
          ->required()
          ->check(integer_check(&is_operand, "a 64-bit integer"));
      break;
  }
  add_json_flag(*sub, args->json);
  bind_action(*sub, action, args, &run_atomic);
}

}  // namespace

void add_kv_atomic_commands(CLI::App& app, Action& action) {
  for (const AtomicCommand& command : kAtomicCommands) add_atomic(app, action, command);
}

}  // namespace weir::tools
