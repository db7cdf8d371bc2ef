#pragma once
// A bounded Lua 5.4 state for user scripts that run inside weir's processes (the lua shard, the lua
// driver, instrument reply parsers): a heap limited to memory_mb MiB, trimmed standard libraries,
// scripts loaded as text only, and a per-call instruction budget. Debian's liblua5.4 is C, so a Lua
// raise longjmps: every call that can raise runs inside lua_pcall here.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <lua.hpp>

#include "weir/core/error.hpp"

namespace weir::lua_sandbox {

inline constexpr std::uint32_t kDefaultMemoryMb = 64;           // heap limit unless a script's settings say otherwise
inline constexpr int kDefaultInstructions = 10'000'000;         // per-call budget unless a script's settings say otherwise
inline constexpr std::uint32_t kMaxMemoryMb = 65536;            // refuse a heap limit past 64 GiB
inline constexpr std::int64_t kMaxInstructions = 2'147'483'647;  // lua_sethook takes an int count
inline constexpr int kTraceLevels = 8;                          // innermost call levels an error's traceback shows

/// How a sandbox is bounded and how its messages name things.
struct SandboxOptions {
  std::uint32_t memory_mb = kDefaultMemoryMb;  // 1..kMaxMemoryMb
  int instructions = kDefaultInstructions;     // per call (and for the file's chunk); 0: unlimited
  std::string budget_scope = "in one call";    // ends the budget message: "... exceeded in one block"
  std::string script_kind = "script";          // names scripts in refusals: "... not allowed in a shard script"
};

/// Counted by the state's allocator; used_bytes <= limit_bytes always holds.
struct Heap {
  std::size_t used_bytes = 0;
  std::size_t peak_bytes = 0;
  std::size_t limit_bytes = 0;
  std::uint64_t allocations = 0;
};

/// How a call into the script ended.
enum class [[nodiscard]] CallStatus : std::uint8_t {
  ok,
  error,            // a runtime error, error(), a stack overflow: the message has file:line and a traceback
  out_of_memory,    // the heap reached memory_mb (Lua collected garbage first)
  budget_exceeded,  // the instruction budget ran out; the message names file:line
};

struct LuaClose {
  void operator()(lua_State* L) const noexcept { lua_close(L); }
};
using LuaState = std::unique_ptr<lua_State, LuaClose>;

/// One bounded Lua state. Its address is kept in the state (lua_getextraspace), so it never moves:
/// hold it as a member of an object that does not move, or in a unique_ptr.
/// Thread: one thread at a time, like the lua_State inside.
class Sandbox {
 public:
  Sandbox() = default;
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;
  Sandbox(Sandbox&&) = delete;
  Sandbox& operator=(Sandbox&&) = delete;
  ~Sandbox() = default;

  /// Creates the state with a heap bounded to options.memory_mb MiB and opens base (without dofile,
  /// loadfile, load, print, warn, require; setmetatable refuses __gc), string (without dump), table,
  /// math, utf8, and os with clock and time only. No io, package, debug or coroutine. `owner` is
  /// handed back by owner_of(L) to C functions the caller installs. Requires: not opened yet.
  /// Fails when memory_mb is out of range or the libraries do not fit in it.
  [[nodiscard]] core::Result<void> open(const SandboxOptions& options, void* owner = nullptr);

  /// Runs f inside lua_pcall with no arguments and no results (to install C functions and tables
  /// that may raise on memory). Fails with "context: message".
  [[nodiscard]] core::Result<void> run_protected(lua_CFunction f, const char* context);

  /// Loads the file as text (a binary chunk is refused) and runs its chunk under the instruction
  /// budget. Fails with `file:line: message` for a syntax error or an error while the chunk runs,
  /// "cannot open FILE" when it cannot be read, or the memory limit. Requires: open.
  [[nodiscard]] core::Result<void> load_file(const std::string& path);

  /// Same as load_file for a chunk held in memory; `chunk_name` appears in messages as the file.
  [[nodiscard]] core::Result<void> load_text(std::string_view text, const std::string& chunk_name);

  /// A registry reference to the global function `name` (for lua_rawgeti before call). Fails with
  /// "FILE defines no global function 'NAME' (it is TYPE)". Requires: a file loaded.
  [[nodiscard]] core::Result<int> function_ref(const std::string& name);

  /// Calls the function below the nargs arguments on top of the stack under the instruction budget,
  /// with a message handler that adds a short traceback. On ok, nresults results replace the function
  /// and its arguments; otherwise one error object does (its text: last_message on the ErrorLog, or
  /// lua_tostring). Allocates nothing itself, never raises. Requires: open; room for one more slot.
  CallStatus call(int nargs, int nresults) noexcept;

  [[nodiscard]] lua_State* state() const noexcept { return state_.get(); }
  [[nodiscard]] const Heap& heap() const noexcept { return heap_; }
  [[nodiscard]] const SandboxOptions& options() const noexcept { return options_; }
  [[nodiscard]] const std::string& script_path() const noexcept { return script_path_; }
  [[nodiscard]] void* owner() const noexcept { return owner_; }

  /// The sandbox that owns L. Requires: L was made by open.
  static Sandbox* of(lua_State* L) noexcept;

  /// Starts a fresh instruction budget; call() does this itself. Thread: the sandbox's.
  void arm_budget() noexcept;
  /// Removes the budget hook and clears the stop.
  void disarm_budget() noexcept;
  /// True once the budget ran out in the current call (from then on every instruction raises, so a
  /// pcall in the script cannot swallow the stop).
  [[nodiscard]] bool budget_blown() const noexcept { return budget_blown_; }

 private:
  static void budget_hook(lua_State* L, lua_Debug* ar);
  [[nodiscard]] std::string pop_error(int status);

  Heap heap_;  // declared before state_: the state is closed first and frees into it
  LuaState state_;
  SandboxOptions options_;
  std::string script_path_;
  void* owner_ = nullptr;
  bool budget_blown_ = false;
};

/// The owner given to Sandbox::open, for C functions installed in the state.
template <class T>
T* owner_of(lua_State* L) noexcept {
  return static_cast<T*>(Sandbox::of(L)->owner());
}

/// A message handler for lua_pcall: the error message with a traceback of the innermost
/// kTraceLevels levels. Sandbox::call uses it; exported for callers that run lua_pcall themselves.
int message_handler(lua_State* L);

}  // namespace weir::lua_sandbox
