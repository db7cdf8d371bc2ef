/* The `lua` shard: a user Lua 5.4 function called once per input block, in a restricted state with
 * a bounded heap and a per-block instruction budget. Script interface: dsp_shards/lua/README.md.
 *
 * Besides the shard ABI table (weir/shard.h) it exports two functions a host that knows the kind
 * may call to show what a script did wrong, since process itself only returns a negative code.
 */
#ifndef WEIR_DSP_LUA_SHARD_H
#define WEIR_DSP_LUA_SHARD_H

#include <stdint.h>

#include "weir/shard.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What process returns for a block the script failed on; 0 for success. */
enum weir_lua_status {
  WEIR_LUA_OK = 0,
  WEIR_LUA_SCRIPT_ERROR = -1,  /* a runtime error or error() in the script */
  WEIR_LUA_OUT_OF_MEMORY = -2, /* the script's heap reached memory_mb */
  WEIR_LUA_BUDGET_EXCEEDED = -3 /* the block ran more than `instructions` Lua instructions */
};

/* Counters of one lua shard instance. */
typedef struct weir_lua_shard_stats {
  uint64_t blocks;          /* process calls */
  uint64_t script_errors;   /* blocks that returned WEIR_LUA_SCRIPT_ERROR */
  uint64_t memory_errors;   /* blocks that returned WEIR_LUA_OUT_OF_MEMORY */
  uint64_t budget_stops;    /* blocks that returned WEIR_LUA_BUDGET_EXCEEDED */
  uint64_t emits_dropped;   /* weir.emit calls whose claim the arena dropped at the source */
  uint64_t keys_busy;       /* weir.set calls the host refused (key held by another writer) */
  uint64_t errors_logged;   /* distinct error messages passed to host->log (at most 16 per shard) */
  uint64_t heap_bytes;      /* bytes the Lua heap holds now */
  uint64_t heap_peak_bytes; /* most bytes it ever held, at most memory_mb MiB */
  uint64_t heap_allocations; /* allocations and growths the Lua heap made since configure */
} weir_lua_shard_stats;

/* The built-in entry: the same table a `weir_shard_entry` of a shared object would return, kind
 * "lua". Returns NULL when host_abi_version is not WEIR_SHARD_ABI_VERSION. Thread: any. */
const weir_shard_api* weir_builtin_lua(uint32_t host_abi_version);

/* The text of the last error process met: `file:line: message`, then the Lua stack traceback
 * (memory errors carry no position: Lua raises them without one). "" while no block failed.
 * The pointer stays valid until the next process or stop on this shard.
 * Thread: the host thread, between process calls. Requires: shard came from this table's configure. */
const char* weir_lua_shard_last_error(const weir_shard* shard);

/* Copies the shard's counters into *out. Thread: the host thread, between process calls. */
void weir_lua_shard_get_stats(const weir_shard* shard, weir_lua_shard_stats* out);

#ifdef __cplusplus
}
#endif

#endif /* WEIR_DSP_LUA_SHARD_H */
