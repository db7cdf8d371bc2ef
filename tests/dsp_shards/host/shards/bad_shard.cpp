// Broken shard objects, one per defect, each built from this file with one WEIR_TEST_BAD value:
//   1 wrong abi_version   2 struct_size larger than the host's   3 NULL table   4 NULL process   5 no entry symbol
//   6 built for ABI version 1 (before frame shapes and array keys), whatever the host asks for
//   7 not broken: a version 2 shard (a table of 72 bytes, answering only a host that asks for 2),
//     whose configure refuses with what it was given (the config's version and size)
// The host must refuse 1 to 6 with a message naming the .so and the defect, and load 7.
#include <cstdint>
#include <cstdio>

#include "weir/shard.h"

namespace {

weir_shard* configure(weir_shard_config* cfg, char* error, size_t bytes) {
  if (WEIR_TEST_BAD == 7)
    std::snprintf(error, bytes, "a version 2 shard saw config version %u of %u bytes", cfg->abi_version,
                  cfg->struct_size);
  return nullptr;
}
int process(weir_shard*, const weir_shard_block*, const weir_shard_host*) { return 0; }
void stop(weir_shard*) {}

constexpr std::uint32_t kAbiVersion =
    WEIR_TEST_BAD == 1 ? 99U : WEIR_TEST_BAD == 6 ? 1U : WEIR_TEST_BAD == 7 ? 2U : WEIR_SHARD_ABI_VERSION;
constexpr std::uint32_t kStructSize = WEIR_TEST_BAD == 2   ? static_cast<std::uint32_t>(sizeof(weir_shard_api)) + 8U
                                      : WEIR_TEST_BAD == 7 ? WEIR_SHARD_API_V2_MAX_SIZE
                                                           : sizeof(weir_shard_api);

const weir_shard_api kApi = {
    kAbiVersion, kStructSize, "bad", "a deliberately broken shard", nullptr, 0, 1U << WEIR_DTYPE_F32, &configure,
    WEIR_TEST_BAD == 4 ? nullptr : &process, &stop, nullptr, nullptr,
};

}  // namespace

#if WEIR_TEST_BAD == 5
extern "C" __attribute__((visibility("default"))) const weir_shard_api* weir_shard_entry_v2(std::uint32_t) {
  return &kApi;
}
#else
extern "C" __attribute__((visibility("default"))) const weir_shard_api* weir_shard_entry(std::uint32_t host_version) {
  if (WEIR_TEST_BAD == 7) return host_version == 2 ? &kApi : nullptr;  // as a version 2 build answered
  return WEIR_TEST_BAD == 3 ? nullptr : &kApi;
}
#endif
