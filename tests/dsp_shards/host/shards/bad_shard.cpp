// Broken shard objects, one per defect, each built from this file with one WEIR_TEST_BAD value:
//   1 wrong abi_version   2 struct_size larger than the host's   3 NULL table   4 NULL process   5 no entry symbol
//   6 built for ABI version 1 (before frame shapes and array keys), whatever the host asks for
// The host must refuse every one of them with a message naming the .so and the defect.
#include <cstdint>

#include "weir/shard.h"

namespace {

weir_shard* configure(weir_shard_config*, char*, size_t) { return nullptr; }
int process(weir_shard*, const weir_shard_block*, const weir_shard_host*) { return 0; }
void stop(weir_shard*) {}

constexpr std::uint32_t kAbiVersion = WEIR_TEST_BAD == 1 ? 99U : WEIR_TEST_BAD == 6 ? 1U : WEIR_SHARD_ABI_VERSION;
constexpr std::uint32_t kStructSize =
    WEIR_TEST_BAD == 2 ? static_cast<std::uint32_t>(sizeof(weir_shard_api)) + 8U : sizeof(weir_shard_api);

const weir_shard_api kApi = {
    kAbiVersion, kStructSize, "bad", "a deliberately broken shard", nullptr, 0, 1U << WEIR_DTYPE_F32, &configure,
    WEIR_TEST_BAD == 4 ? nullptr : &process, &stop, nullptr,
};

}  // namespace

#if WEIR_TEST_BAD == 5
extern "C" __attribute__((visibility("default"))) const weir_shard_api* weir_shard_entry_v2(std::uint32_t) {
  return &kApi;
}
#else
extern "C" __attribute__((visibility("default"))) const weir_shard_api* weir_shard_entry(std::uint32_t) {
  return WEIR_TEST_BAD == 3 ? nullptr : &kApi;
}
#endif
