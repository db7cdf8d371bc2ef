// A shard that misbehaves on request, for the host's failure tests. It accepts only f32 input,
// counts blocks into the key <base>.seen, and from block `at` on (1-based) does what `mode` says:
//   none    nothing unusual          segv   dereferences a bad pointer (the host process dies)
//   hang    never returns            fail   returns -1 (counted as errors)
//   skip    returns 1 (skipped)      bigkey declares a key larger than any arena value slot
//   lap     also writes its own input channel and, on block `at`, laps the ring under its own
//           reader: the block it is reading is torn
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "weir/shard.h"

namespace {

enum class Mode : std::uint8_t { none, segv, hang, fail, skip, bigkey, lap };

struct Faulty {
  Mode mode = Mode::none;
  std::uint64_t at = 0;
  std::uint64_t seen = 0;
};

constexpr double kMaxAt = 1e9;
constexpr std::uint64_t kBigKeyBytes = std::uint64_t{1} << 30;
constexpr int kLapBlocks = 1024;  // more than any ring the tests make
constexpr std::uintptr_t kBadAddress = 8;  // never mapped: the first page is reserved

const weir_shard_param kParams[] = {
    {"mode", WEIR_PARAM_TEXT, 0, "none", 0, 0, "none|segv|hang|fail|skip|bigkey|lap", "how to misbehave"},
    {"at", WEIR_PARAM_INT, 0, nullptr, 1, kMaxAt, nullptr, "the block (1-based) from which to misbehave"},
    {"ratio", WEIR_PARAM_REAL, 0, "0.5", 0, 1, nullptr, "unused; its range is checked by the host"},
    {"loud", WEIR_PARAM_BOOL, 0, "false", 0, 0, nullptr, "unused; its type is checked by the host"},
};

const char* param(const weir_shard_config* cfg, const char* name) {
  for (std::uint32_t i = 0; i < cfg->param_count; ++i)
    if (std::strcmp(cfg->param_names[i], name) == 0) return cfg->param_values[i];
  return "";
}

weir_shard* configure(weir_shard_config* cfg, char* error, size_t error_bytes) {
  auto* f = new (std::nothrow) Faulty{};
  if (f == nullptr) return nullptr;
  const char* mode = param(cfg, "mode");
  const char* names[] = {"none", "segv", "hang", "fail", "skip", "bigkey", "lap"};
  for (std::uint8_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i)
    if (std::strcmp(mode, names[i]) == 0) f->mode = static_cast<Mode>(i);
  f->at = std::strtoull(param(cfg, "at"), nullptr, 10);
  weir_shard_output& key = cfg->outputs[0];
  std::memset(&key, 0, sizeof key);
  const int n = std::snprintf(key.name, sizeof key.name, "%s.seen", cfg->output_base);
  if (n < 0 || static_cast<std::size_t>(n) >= sizeof key.name) {
    std::snprintf(error, error_bytes, "output base '%s' is too long", cfg->output_base);
    delete f;
    return nullptr;
  }
  key.kind = WEIR_OUTPUT_KEY;
  key.key_type = f->mode == Mode::bigkey ? WEIR_KEY_BYTES : WEIR_KEY_U64;
  key.max_bytes = f->mode == Mode::bigkey ? kBigKeyBytes : sizeof(std::uint64_t);
  cfg->output_count = 1;
  if (f->mode == Mode::lap) {
    weir_shard_output& self = cfg->outputs[1];
    std::memset(&self, 0, sizeof self);
    std::snprintf(self.name, sizeof self.name, "%s", cfg->input_channel);
    self.kind = WEIR_OUTPUT_CHANNEL;
    self.dtype = cfg->input_dtype;
    self.rate_hz = cfg->input_rate_hz;
    self.samples_per_block = cfg->input_samples_per_block;
    cfg->output_count = 2;
  }
  return reinterpret_cast<weir_shard*>(f);
}

int process(weir_shard* shard, const weir_shard_block*, const weir_shard_host* host) {
  auto* f = reinterpret_cast<Faulty*>(shard);
  ++f->seen;
  if (host->set_key(host->self, 0, &f->seen, sizeof f->seen) != 0) return -1;
  if (f->seen < f->at) return 0;
  switch (f->mode) {
    case Mode::none:
    case Mode::bigkey: return 0;
    case Mode::segv: {
      volatile std::uintptr_t address = kBadAddress;  // read at run time: the compiler cannot see it is bad
      *reinterpret_cast<volatile int*>(address) = 1;
      return 0;
    }
    case Mode::hang:
      for (;;) pause();  // asleep, not spinning: only the watchdog ends this
    case Mode::fail: return -1;
    case Mode::skip: return 1;
    case Mode::lap:
      if (f->seen == f->at)
        for (int i = 0; i < kLapBlocks; ++i) {
          std::uint32_t capacity = 0;
          if (host->claim(host->self, 1, &capacity) != nullptr) host->publish(host->self, 1, 0, 0, 0);
        }
      return 0;
  }
  return 0;
}

void stop(weir_shard* shard) { delete reinterpret_cast<Faulty*>(shard); }

const weir_shard_api kApi = {
    WEIR_SHARD_ABI_VERSION, sizeof(weir_shard_api), "faulty", "misbehaves on request (host failure tests)",
    kParams, sizeof(kParams) / sizeof(kParams[0]), 1U << WEIR_DTYPE_F32, &configure, &process, &stop, nullptr, nullptr,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const weir_shard_api* weir_shard_entry(std::uint32_t host_abi) {
  return host_abi == WEIR_SHARD_ABI_VERSION ? &kApi : nullptr;
}
