#pragma once
// A small writer of recording files exactly as docs/design/recording.md lays them out (format 1.1;
// fixed_strings with weir_format "weir-recording 1" gives a 1.0 file), so the replay tests do not depend on the streaming recorder. Tests describe each channel's blocks
// and gap rows; the writer derives data, offsets and attributes, or leaves out what a test asks.
#include <cstdint>
#include <string>
#include <vector>

#include "weir/h5/recording_format.hpp"

namespace weir::test {

struct RecBlock {
  std::uint64_t sequence = 0;
  std::uint32_t samples = 0;
  std::uint32_t flags = 0;
  std::uint64_t realtime_ns = 0;
  std::uint64_t monotonic_ns = 0;
};

struct RecGap {
  std::uint64_t sequence = 0;  // first missing block
  std::uint64_t blocks = 0;
  std::uint8_t reason = 0;  // index into the format's reason_names (h5::GapReason)
  std::uint64_t realtime_ns = 0;
};

struct RecChannel {
  std::string name;
  std::string link;           // the group's name when it differs from name (the format's %-escaping)
  std::string dtype = "u32";  // u32 (sample i of block s: s * 65536 + i), f32 (s + i / 1024) or c64 (re s, im -i)
  double rate_hz = 0;
  std::string units = "V";
  std::string labels;  // comma-separated
  std::uint32_t samples_per_block = 0;
  std::vector<RecBlock> blocks;
  std::vector<RecGap> gaps;
};

/// A key's log: its values at times (s since the file's start) as f64 numbers, text, or an array
/// of u32 elements of one shape (rows of shape's elements each).
struct RecKey {
  std::string name;
  std::vector<double> time;
  std::vector<double> numbers;               // a f64 log
  std::vector<std::string> text;             // a text log (variable-length UTF-8)
  std::vector<std::vector<std::uint32_t>> array;  // an array log, dtype u32
  std::vector<std::uint32_t> shape;               // of one array value: [n] or [rows, cols]
};

struct RecFileOptions {
  std::string format = h5::kFormat16;  // the 1-D layout it writes; "" leaves weir_format out
  std::uint64_t run = 1;
  std::uint64_t segment = 0;
  bool fixed_strings = false;          // fixed-length string attributes instead of variable-length
  std::string omit_dataset;            // a channel dataset to leave out ("block_sequence", ...)
  bool short_offsets = false;          // block_offset one row short of the other tables (a killed recorder)
  bool unwritten_rows = false;         // a trailing block row and gap row left at the format's fill values
  std::uint64_t arena_created_ns = 0;  // 0 leaves the attribute out
  std::uint64_t start_ns = 0;          // the file's start (start_time, start_ns); 0: 2024-01-01T00:00:00Z
  std::vector<RecKey> keys;            // key logs beside the fixed "temperature" log
};

/// The value of sample i of recorded block seq for the u32 pattern.
inline std::uint32_t u32_sample(std::uint64_t seq, std::uint32_t i) {
  return static_cast<std::uint32_t>(seq * 65536 + i);
}
/// The f32 pattern.
inline float f32_sample(std::uint64_t seq, std::uint32_t i) {
  return static_cast<float>(seq) + static_cast<float>(i) / 1024.0F;
}

/// Blocks first..first+count-1 of `samples` samples each, `period_ns` apart on both clocks.
std::vector<RecBlock> rec_blocks(std::uint64_t first, std::uint64_t count, std::uint32_t samples,
                                 std::uint64_t realtime0_ns, std::uint64_t monotonic0_ns, std::uint64_t period_ns);

/// Writes one recording file; fails the test (REQUIRE) on any HDF5 error.
void write_recording(const std::string& path, const std::vector<RecChannel>& channels,
                     const RecFileOptions& options = {});

}  // namespace weir::test
