// The floors on their own: the bare seqlock with the arena's geometry, and memcpy from the same slots.
#include "bare_floor.hpp"
#include "cases.hpp"

namespace weir::bench {

namespace {

void run_size(const Config& config, BareFloor& floor, std::uint32_t size_bytes, std::string_view size_name,
              Results& results) {
  const std::size_t bytes = opaque(std::size_t{size_bytes});
  const std::string size(size_name);
  results.add("base.seqlock.publish." + size,
              measure(config, [&](std::uint64_t i) noexcept { return floor.publish(i, bytes); }), "none");
  results.add("base.seqlock.read." + size,
              measure(config, [&](std::uint64_t i) noexcept { return floor.read(i, bytes); }), "busy");
  results.add("base.memcpy." + size, measure(config, [&](std::uint64_t i) noexcept { return floor.copy(i, bytes); }),
              "none");
}

}  // namespace

void run_baseline_cases(const Config& config, Results& results) {
  BareFloor floor;
  if (!floor.valid()) {
    results.note_error("setup.mmap", "mmap of the bare seqlock map failed");
    return;
  }
  run_size(config, floor, kSmallBytes, "64B", results);
  run_size(config, floor, kLargeBytes, "4KiB", results);
}

}  // namespace weir::bench
