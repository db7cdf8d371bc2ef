#pragma once
// The recording file format's fixed names and the recorder's tunables, declared once.
// The format itself: docs/design/recording.md.
#include <array>
#include <cstdint>
#include <string_view>

namespace weir::rec {

inline constexpr std::string_view kFormatName = "weir-recording 1";  // root attribute weir_format
inline constexpr std::uint32_t kFormatMajor = 1;                      // readers refuse other majors

/// Why a run of blocks is missing from a channel's data; stored as u8 in the gaps table, whose
/// reason_names attribute lists these names in this order.
enum class GapReason : std::uint8_t {
  lapped = 0,             // the writer overwrote blocks before the recorder read them (lossy)
  dropped_at_source = 1,  // the writer dropped them because a lossless reader was full
  recorder_restart = 2,   // published while no recorder ran, after one was killed
  recorder_stopped = 3,   // published while no recorder ran, after a clean stop
  disk_error = 4,         // recording stopped: disk full or a write failed
};
/// Fill values: rows a failed write left extended but unwritten read as these.
inline constexpr std::uint64_t kUnwrittenSequence = ~std::uint64_t{0};  // block_sequence of an unwritten row
inline constexpr std::uint8_t kUnwrittenReason = 255;                   // gaps reason of an unwritten row
inline constexpr std::array<std::string_view, 5> kGapReasonNames{"lapped", "dropped_at_source", "recorder_restart",
                                                                 "recorder_stopped", "disk_error"};
inline constexpr std::string_view kGapReasonList =
    "lapped,dropped_at_source,recorder_restart,recorder_stopped,disk_error";

inline constexpr std::uint32_t kDefaultFlushMs = 1000;          // --flush-ms unless given
inline constexpr std::uint64_t kTargetChunkBytes = 256 * 1024;  // data chunk: whole blocks, about this many bytes
inline constexpr std::uint64_t kMaxChunkBytes = 1024 * 1024;    // never more blocks per chunk than fit in this
inline constexpr std::uint32_t kTableChunkRows = 1024;          // rows per chunk of the per-block tables
inline constexpr std::uint32_t kGapChunkRows = 64;              // rows per chunk of a gaps table
inline constexpr std::uint32_t kKeyChunkRows = 256;             // rows per chunk of a key's NXlog
inline constexpr std::uint32_t kMaxKeyTextBytes = 256;          // text/bytes keys: fixed width of their log entries
inline constexpr std::uint32_t kTimeTextBytes = 32;             // fixed width of stop_time and first_sample_time
inline constexpr std::uint32_t kBlocksPerTurn = 64;             // blocks read from one channel before the next
inline constexpr std::int64_t kWaitSliceNs = 50'000'000;        // longest sleep: stop and rotate requests are seen this fast
inline constexpr std::int64_t kDiscoverEveryNs = 200'000'000;   // looks for new matching channels and keys this often
inline constexpr std::uint64_t kCloseReserveBytes = 256 * 1024;  // free disk kept for metadata to close a file cleanly
inline constexpr std::uint64_t kHeldChunks = 4;                 // chunks of a new dataset HDF5 holds in memory under SWMR until a flush
inline constexpr std::uint32_t kMaxKeyWatches = 16;             // keys subscribed for wake-ups; more are sampled on other wakes

}  // namespace weir::rec
