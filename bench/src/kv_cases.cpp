// Single-threaded KvStore cases. Each cycles over kKeyCount keys so a case is not one hot line.
#include <array>
#include <cstdio>
#include <cstring>
#include <span>

#include "bare_floor.hpp"
#include "cases.hpp"

namespace weir::bench {

std::vector<std::string> make_keys(std::string_view prefix, std::uint32_t first, std::uint32_t count) {
  std::vector<std::string> keys;
  keys.reserve(count);
  for (std::uint32_t i = first; i < first + count; ++i) {
    char digits[16];
    std::snprintf(digits, sizeof digits, "%03u", i);
    keys.push_back(std::string(prefix) + digits);
  }
  return keys;
}

namespace {

using core::KvStatus;

struct Fixture {
  core::KvStore kv;
  std::vector<std::string> keys = make_keys("key.", 0, kKeyCount);
  std::vector<std::string> misses = make_keys("key.", kKeyCount, kKeyCount);  // same shape, never inserted
  std::vector<std::string> counters = make_keys("cnt.", 0, kKeyCount);
  std::array<core::KeyHandle, kKeyCount> handles{};  // inline, like the floor's slot numbers
  alignas(core::kCacheLine) std::array<std::byte, kLargeBytes> value{};
  alignas(core::kCacheLine) std::array<std::byte, kLargeBytes> out{};

  explicit Fixture(const core::Arena& arena) : kv(arena) {}

  // Untimed setup: every key holds a value of `bytes`. Returns false (after reporting) on failure.
  bool fill(std::uint32_t bytes, Results& results) {
    Check check;
    std::uint64_t bad = 0;
    for (const std::string& key : keys) bad += check(kv.set(key, std::span(value.data(), bytes))) ? 0U : 1U;
    if (bad != 0) results.note_failures("setup.fill", bad, keys.size(), check.what());
    return bad == 0;
  }
};

// Untimed: every key, by key and by handle, returns exactly `bytes` bytes of the fill pattern. The
// timed loops check each call's status only, as the floor's do.
void verify_values(Fixture& f, std::uint32_t bytes, std::string_view size, Results& results) {
  Check check;
  std::uint64_t bad = 0;
  for (std::uint32_t i = 0; i < kKeyCount; ++i) {
    core::ValueInfo by_key, by_handle;
    const bool ok = check(f.kv.get(f.keys[i], std::span(f.out), by_key)) && by_key.length == bytes &&
                    std::memcmp(f.out.data(), f.value.data(), bytes) == 0 &&
                    check(f.kv.get(f.handles[i], std::span(f.out), by_handle)) && by_handle.length == bytes &&
                    std::memcmp(f.out.data(), f.value.data(), bytes) == 0;
    bad += ok ? 0U : 1U;
  }
  if (bad != 0) results.note_failures("verify." + std::string(size), bad, kKeyCount, "wrong length or bytes");
}

// Each case is timed in alternation with its floor (measure_paired): the row's ratio is the
// median of per-repetition ratios, so machine-speed drift between the two does not enter it.
void run_size(const Config& config, Fixture& f, BareFloor& floor, std::uint32_t bytes, std::string_view size_name,
              Results& results) {
  const std::span<const std::byte> value(f.value.data(), bytes);
  const std::size_t base_bytes = opaque(std::size_t{bytes});
  const std::string size(size_name);
  verify_values(f, bytes, size, results);
  const std::string publish_floor = "base.seqlock.publish." + size;
  const std::string read_floor = "base.seqlock.read." + size;
  const auto base_publish = [&](std::uint64_t i) noexcept { return floor.publish(i, base_bytes); };
  const auto base_read = [&](std::uint64_t i) noexcept { return floor.read(i, base_bytes); };
  {
    Check check;
    const Paired p = measure_paired(config, base_publish, [&](std::uint64_t i) noexcept {
      return check(f.kv.set(f.keys[i % kKeyCount], value));
    });
    results.add_paired("kv.set." + size + ".key", publish_floor, p, check.what());
  }
  {
    Check check;
    core::ValueInfo info;  // reused, as a reading loop would
    const Paired p = measure_paired(config, base_read, [&](std::uint64_t i) noexcept {
      const bool ok = check(f.kv.get(f.keys[i % kKeyCount], std::span(f.out), info));
      keep(f.out[0]);
      return ok;
    });
    results.add_paired("kv.get." + size + ".key", read_floor, p, check.what());
  }
  {
    Check check;
    const Paired p = measure_paired(config, base_publish, [&](std::uint64_t i) noexcept {
      return check(f.kv.set(f.handles[i % kKeyCount], value));
    });
    results.add_paired("kv.set." + size + ".handle", publish_floor, p, check.what());
  }
  {
    Check check;
    core::ValueInfo info;
    const Paired p = measure_paired(config, base_read, [&](std::uint64_t i) noexcept {
      const bool ok = check(f.kv.get(f.handles[i % kKeyCount], std::span(f.out), info));
      keep(f.out[0]);
      return ok;
    });
    results.add_paired("kv.get." + size + ".handle", read_floor, p, check.what());
  }
}

void run_small_only(const Config& config, Fixture& f, Results& results) {
  const std::span<std::byte> out(f.out.data(), f.out.size());
  {
    Check check;
    const Measured m = measure(config, [&](std::uint64_t i) noexcept {
      core::ValueInfo info;
      return check(f.kv.get(f.misses[i % kKeyCount], out, info), KvStatus::not_found);
    });
    results.add("kv.get.miss", m, check.what());
  }
  {
    Check check;
    const Measured m = measure(config, [&](std::uint64_t i) noexcept {
      core::ValueView view;
      if (!check(f.kv.view(f.keys[i % kKeyCount], view))) return false;
      std::uint64_t folded = 0;  // read all 64 bytes in place, as a zero-copy reader would
      for (std::uint32_t at = 0; at + sizeof folded <= kSmallBytes; at += sizeof folded) {
        std::uint64_t word;
        std::memcpy(&word, view.data() + at, sizeof word);
        folded ^= word;
      }
      keep(folded);
      return check.that(view.valid(), "view invalid") && check.that(view.size() == kSmallBytes, "length");
    });
    results.add("kv.view.64B.key", m, check.what());
  }
  {
    Check check;
    std::uint64_t bad = 0;
    for (const std::string& key : f.counters) bad += check(f.kv.set_i64(key, 0)) ? 0U : 1U;
    if (bad != 0) results.note_failures("setup.counters", bad, f.counters.size(), check.what());
    const Measured m = measure(config, [&](std::uint64_t i) noexcept {
      std::uint64_t result = 0;
      const bool ok = check(f.kv.atomic(f.counters[i % kKeyCount], core::AtomicOp::add, 1, result));
      keep(result);
      return ok;
    });
    results.add("kv.incr", m, check.what());
    // Every add must have landed: the counters sum to the number of calls.
    std::uint64_t sum = 0;
    for (const std::string& key : f.counters) {
      std::uint64_t bits = 0;
      core::ValueType type = core::ValueType::none;
      if (check(f.kv.get_scalar(key, bits, type))) sum += bits;
    }
    if (sum != m.calls) results.note_error("kv.incr.sum", "counters do not sum to the calls made");
  }
}

}  // namespace

void run_kv_cases(const Config& config, const core::Arena& arena, Results& results) {
  Fixture f(arena);
  for (std::size_t i = 0; i < f.value.size(); ++i) f.value[i] = static_cast<std::byte>(i);
  if (!f.fill(kSmallBytes, results)) return;
  Check check;
  std::uint64_t bad = 0;
  for (std::uint32_t i = 0; i < kKeyCount; ++i) bad += check(f.kv.resolve(f.keys[i], f.handles[i])) ? 0U : 1U;
  if (bad != 0) {
    results.note_failures("setup.resolve", bad, kKeyCount, check.what());
    return;
  }
  std::array<std::uint32_t, kKeyCount> key_slots{};
  for (std::uint32_t i = 0; i < kKeyCount; ++i) key_slots[i] = f.handles[i].slot;
  BareFloor floor(key_slots);  // the keys' own slot numbers: the same lines and pages as the store
  if (!floor.valid()) {
    results.note_error("setup.mmap", "mmap of the bare seqlock map failed");
    return;
  }
  run_size(config, f, floor, kSmallBytes, "64B", results);
  run_small_only(config, f, results);
  if (!f.fill(kLargeBytes, results)) return;
  run_size(config, f, floor, kLargeBytes, "4KiB", results);
}

}  // namespace weir::bench
