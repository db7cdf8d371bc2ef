#pragma once
// The recording file format (docs/design/recording.md, format 2.0), declared once: every name, fixed
// value and table row that the writer (recorders/stream) and the reader (weir/h5/recording.hpp)
// share. A change here is a change of the format: update the design document with it.
//
//   /                    root attributes kAttrFormat ... kAttrDefault
//   /entry               NX_class = kNxEntry, default = the pipeline's default plot or the first sample channel
//   /entry/title, definition, start_time, end_time   NeXus entry fields (1.6; definition 2.0)
//   /entry/instrument    NX_class = kNxInstrument (1.6), kNxSource (2.0), one kNxDetector group per channel
//   /entry/<channel>     NX_class = kNxData, signal = kData, channel, policy
//       data             samples, one row per block (2.0) or frame; attributes kAttrUnits ... kAttrLongName
//       time             the time axis (2.0): f64, one value per row of data, s since start_time
//       time_in_block    the second axis of a sample channel (2.0): f64 s of each column after its row's time
//       block_*          the six per-block tables, one row per block (kBlockSequence ...)
//       gaps             GapRow table (packed: 25 bytes a row), attribute reason_names
//       clock_steps      ClockStepRow table (1.1): the block stamps' clock steps
//   /entry/clock         NX_class = kNxCollection (1.1): clock provenance, ClockOffsetRow table
//   /entry/keys          NX_class = kNxCollection (only when keys are recorded)
//   /entry/keys/<key>    NX_class = kNxLog, key; datasets time (f64 s) and value
//   /entry/<key>         NX_class = kNxData (1.2): an array key plotted against its <key>_axis key
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "weir/core/arena_layout.hpp"
#include "weir/core/gap_reason.hpp"
#include "weir/h5/handle.hpp"

namespace weir::h5 {

// Format identity: weir_format = "<kFormatName> <major>[.minor]". A minor version adds what a
// reader of the same major may ignore or reads either way; a major one changes what it must
// understand (docs/design/recording.md, "Versions").
inline constexpr char kFormatName[] = "weir-recording";
inline constexpr std::uint32_t kFormatMajor = 2;                // what this build writes
inline constexpr std::uint32_t kFormatMinor = 0;
inline constexpr std::uint32_t kFormatOldestMajor = 1;          // readers read majors 1 .. kFormatMajor
inline constexpr char kFormatWritten[] = "weir-recording 2.0";  // the weir_format this build writes
inline constexpr char kFormat16[] = "weir-recording 1.6";       // the last format of major 1 (1-D data)

// Root attributes.
inline constexpr char kAttrFormat[] = "weir_format";
inline constexpr char kAttrVersion[] = "weir_version";
inline constexpr char kAttrRun[] = "run";                    // u64
inline constexpr char kAttrSegment[] = "segment";            // u64
inline constexpr char kAttrStartTime[] = "start_time";       // ISO 8601 UTC, ns
inline constexpr char kAttrStopTime[] = "stop_time";         // text; empty: not closed cleanly
inline constexpr char kAttrStartNs[] = "start_ns";           // u64, ns since the epoch
inline constexpr char kAttrStopNs[] = "stop_ns";             // u64; 0: not closed cleanly
inline constexpr char kAttrHost[] = "host";
inline constexpr char kAttrArena[] = "arena";
inline constexpr char kAttrArenaGeometry[] = "arena_geometry";
inline constexpr char kAttrArenaCreatedNs[] = "arena_created_ns";  // u64: one arena incarnation
inline constexpr char kAttrPipeline[] = "pipeline";          // Lua text or ""
inline constexpr char kAttrRecorderPid[] = "recorder_pid";   // u64
inline constexpr char kAttrRecorderStartTicks[] = "recorder_start_ticks";  // u64
inline constexpr char kAttrCreator[] = "creator";
inline constexpr char kCreator[] = "weir record";
inline constexpr char kAttrDefault[] = "default";            // NeXus: the group to plot

// Groups and NeXus classes.
inline constexpr char kEntry[] = "entry";
inline constexpr char kKeys[] = "keys";  // under /entry
inline constexpr char kAttrNxClass[] = "NX_class";
inline constexpr char kNxEntry[] = "NXentry";
inline constexpr char kNxData[] = "NXdata";
inline constexpr char kNxCollection[] = "NXcollection";
inline constexpr char kNxEventData[] = "NXevent_data";

// Events (2.0): an event channel (core/event_record.hpp) also has /entry/<channel group>
// kEventsSuffix, an NXevent_data: per pulse (a block) kEventTimeZero (u64 ns since the epoch,
// attrs units "ns", offset kEpoch) and kEventIndex (u64, its first event); per event
// kEventTimeOffset (i64 ns after its pulse, units "ns"; negative for a pulse an earlier block began), kEventId (u32), kPulseHeight (f64, the
// channel's units) and kEventFlags (u32, core::kEventFlag*). The channel's NXdata keeps the
// blocks, their tables and gaps: a lost block is a lost pulse, counted there.
inline constexpr char kEventsSuffix[] = "_events";
inline constexpr char kEventTimeZero[] = "event_time_zero";
inline constexpr char kEventIndex[] = "event_index";
inline constexpr char kEventTimeOffset[] = "event_time_offset";
inline constexpr char kEventId[] = "event_id";
inline constexpr char kPulseHeight[] = "pulse_height";
inline constexpr char kEventFlags[] = "event_flags";
inline constexpr char kAttrOffset[] = "offset";
inline constexpr char kEpoch[] = "1970-01-01T00:00:00Z";
inline constexpr char kNsUnits[] = "ns";
inline constexpr char kNxLog[] = "NXlog";

// NeXus entry fields (1.6), datasets under /entry. kEntryTitle: text, "<arena> run <run>", written
// at create. kEntryStartTime, kEntryEndTime: the realtime stamps of the segment's first and last
// block (over every channel; without a block, the segment's start and stop) as ISO 8601 UTC with
// nanoseconds (iso8601_ns): "" until the first block, rewritten at each flush and at close.
inline constexpr char kEntryTitle[] = "title";
inline constexpr char kEntryStartTime[] = "start_time";
inline constexpr char kEntryEndTime[] = "end_time";
// /entry/kInstrument (NX_class kNxInstrument) holds one group per channel, named as the channel's
// group (encode_name), NX_class kNxDetector, with scalar datasets kDetectorSampleRate (f64,
// attribute units = kHertz), kDetectorUnits (text: the channel's units), kDetectorDtype (text:
// core::dtype_name) and kDetectorSamplesPerBlock (u32), and attribute kAttrChannel.
inline constexpr char kInstrument[] = "instrument";
inline constexpr char kNxInstrument[] = "NXinstrument";
inline constexpr char kNxDetector[] = "NXdetector";
inline constexpr char kDetectorSampleRate[] = "sample_rate";
inline constexpr char kDetectorUnits[] = "units";
inline constexpr char kDetectorDtype[] = "dtype";
inline constexpr char kDetectorSamplesPerBlock[] = "samples_per_block";
inline constexpr char kHertz[] = "Hz";
inline constexpr char kCountUnits[] = "1";  // units of a count (samples_per_block): dimensionless
// The block tables' units (2.0): kCountUnits for block_sequence, block_offset, block_samples and
// block_flags, kNanoseconds for block_realtime_ns and block_monotonic_ns.
inline constexpr char kNanoseconds[] = "ns";

// NeXus metadata from the pipeline (2.0; rec::NexusMeta, docs/design/recording.md "NeXus metadata").
// /entry/kEntryDefinition: text, the pipeline's `entry { definition = ... }` or kDefaultDefinition;
// /entry/title is the pipeline's `title` when it gives one. /entry/kInstrument/kSource (NX_class
// kNxSource, only when the pipeline declares a source): text datasets kSourceName, kSourceType and
// kSourceProbe (the last two when given).
inline constexpr char kEntryDefinition[] = "definition";
inline constexpr char kDefaultDefinition[] = "NXentry";  // the base class: no application definition claimed
inline constexpr char kSource[] = "source";
inline constexpr char kNxSource[] = "NXsource";
inline constexpr char kSourceName[] = "name";
inline constexpr char kSourceType[] = "type";
inline constexpr char kSourceProbe[] = "probe";
// Each NXdetector, when the pipeline names the part that writes its channel: text datasets
// kDetectorPart (the part's name), kDetectorDriver (its kind: "sim", "udp", "fft", ...) and
// kDetectorRole ("driver" or "shard"), and a group kDetectorSettings (NXcollection) with one text
// dataset per setting of that part, named as the setting (nested tables as "queries[1].send", escaped
// as encode_name does), the value as text (numbers as %.17g).
inline constexpr char kDetectorPart[] = "part";
inline constexpr char kDetectorDriver[] = "driver";
inline constexpr char kDetectorRole[] = "role";
inline constexpr char kDetectorSettings[] = "settings";
// Calibration (2.0): a channel the pipeline calibrates (`calibration = { scale, offset, units }`)
// keeps raw values in `data`; its NXdetector gets f64 datasets kCalibrationScale (attribute units
// "<calibrated units>/<raw units>") and kCalibrationOffset (units: the calibrated units) and text
// kCalibratedUnits, and its `data` the attributes kCalibrationScale, kCalibrationOffset (f64) and
// kCalibratedUnits (text): value = offset + scale * raw, in the calibrated units.
inline constexpr char kCalibrationScale[] = "calibration_scale";
inline constexpr char kCalibrationOffset[] = "calibration_offset";
inline constexpr char kCalibratedUnits[] = "calibrated_units";

// A channel's group: attributes, then its datasets.
inline constexpr char kAttrSignal[] = "signal";    // = kData
inline constexpr char kAttrChannel[] = "channel";  // the channel's name as it is
inline constexpr char kAttrPolicy[] = "policy";    // "lossless" or "lossy"
inline constexpr char kAttrAxes[] = "axes";                 // NeXus: the axis of each dimension of data (1.1)
inline constexpr char kAttrTimeIndices[] = "time_indices";  // NeXus: the dimension of data time scales, 0
inline constexpr char kAttrLongName[] = "long_name";        // a plot label, of data and of time
// A channel's time axis: its start_time is the attribute kAttrStart (see kTimeInBlock below).
inline constexpr char kTime[] = "time";
// `data` (2.0): 2-D, one row per block of samples_per_block columns (a short block's row is padded
// with its fill value: NaN for floating dtypes, 0 for integers; block_samples says how many are
// samples), or one row per frame for a frame channel; chunked by whole rows, extendible along rows,
// native dtype (sample_type.hpp). block_offset is row * columns. Major 1 wrote sample channels 1-D.
inline constexpr char kData[] = "data";
// The row axis (2.0): `time`, f64[rows], the realtime stamp of each row's first sample in s since
// the segment's start_time (a frame's: its block's stamp + frame index * frame_elements /
// sample_rate_hz): the true time of every row, after gaps too. A sample channel's second axis,
// `time_in_block`, f64[samples_per_block] = column / sample_rate_hz: sample (r, c) was taken at
// time[r] + time_in_block[c]. Major 1 wrote `time` as two numbers (start, step).
inline constexpr char kTimeInBlock[] = "time_in_block";
inline constexpr char kAttrUnits[] = "units";
inline constexpr char kAttrSampleRateHz[] = "sample_rate_hz";        // f64
inline constexpr char kAttrLabels[] = "labels";                      // comma-separated
inline constexpr char kAttrDtype[] = "dtype";                        // core::dtype_name
inline constexpr char kAttrSamplesPerBlock[] = "samples_per_block";  // u32
inline constexpr char kAttrFirstSampleTime[] = "first_sample_time";  // text; empty until the first block
inline constexpr char kAttrFirstSampleNs[] = "first_sample_ns";      // u64
inline constexpr char kAttrFirstSampleIndex[] = "first_sample_index";  // u64: channel-stream index of data[0]
// Which clock stamped the channel's blocks (1.3), text on data: kClockSource when every block of the
// segment carries core::kBlockSourceTimeFlag (its realtime stamp is the source's own clock, e.g. a UDP
// packet's timestamp), kClockHost when none does (the host's clock when the block was written or
// received), kClockMixed when some do; empty until the first block. block_flags has it per block.
inline constexpr char kAttrClock[] = "clock";
inline constexpr char kClockSource[] = "source";
inline constexpr char kClockHost[] = "host";
inline constexpr char kClockMixed[] = "mixed";

// Frame channels (1.2): a channel whose descriptor declares a frame shape (core::FrameShape) records
// `data` as 2-D (frames x frame_elements), one row per frame, chunked and extendible along frames;
// block_offset and block_samples still count elements (row * frame_elements + column). The group's
// `axes` is the text list (kTime, <axis name>) with kAttrTimeIndices 0 and "<axis name>_indices" 1
// (kAttrIndicesSuffix); `time` is (start, step) per frame, step = frame_elements / sample_rate_hz;
// the axis dataset, named after the axis (kDefaultFrameAxis when the channel names none), holds the
// frame_elements f64 values start + i * step with attributes units and long_name. `data` gains
// kAttrFramesPerBlock and kAttrFrameElements. The axis dataset's kAttrAxisValuesKey names the KV key
// of explicit axis values when the channel declares one (the dataset still holds start + i * step).
inline constexpr char kAttrFramesPerBlock[] = "frames_per_block";  // u32, of data
inline constexpr char kAttrFrameElements[] = "frame_elements";     // u32, of data
inline constexpr char kAttrIndicesSuffix[] = "_indices";           // NeXus AXISNAME_indices
inline constexpr char kAttrAxisStart[] = "axis_start";             // f64, of the axis dataset
inline constexpr char kAttrAxisStep[] = "axis_step";               // f64, of the axis dataset
inline constexpr char kAttrAxisValuesKey[] = "values_key";         // text, of the axis dataset ("" for none)
inline constexpr char kDefaultFrameAxis[] = "element";             // the axis name when a channel gives none
inline constexpr char kFrameAxisSuffix[] = "_in_frame";            // appended to an axis name a dataset has

// The per-block tables, one row per block; authoritative: a reader uses the first n rows of each,
// n the shortest table, up to the first row whose block_sequence is kUnwrittenSequence.
inline constexpr char kBlockSequence[] = "block_sequence";         // u64, the writer's block sequence
inline constexpr char kBlockOffset[] = "block_offset";             // u64, index in data of the first sample
inline constexpr char kBlockSamples[] = "block_samples";           // u32
inline constexpr char kBlockRealtimeNs[] = "block_realtime_ns";    // u64, CLOCK_REALTIME
inline constexpr char kBlockMonotonicNs[] = "block_monotonic_ns";  // u64
inline constexpr char kBlockFlags[] = "block_flags";               // u32

// The gaps table: GapRow rows, and the names of its reasons.
inline constexpr char kGaps[] = "gaps";
inline constexpr char kGapSequence[] = "sequence";
inline constexpr char kGapBlocks[] = "blocks";
inline constexpr char kGapReason[] = "reason";
inline constexpr char kGapRealtimeNs[] = "realtime_ns";
inline constexpr char kAttrReasonNames[] = "reason_names";

// A key's log.
inline constexpr char kAttrKey[] = "key";        // the key's name as it is
inline constexpr char kKeyTime[] = "time";       // f64 s since the segment's start_time
inline constexpr char kKeyValue[] = "value";     // f64, or text (1.0: fixed ASCII, NUL-padded)
inline constexpr char kAttrStart[] = "start";    // of time: the segment's start_time
inline constexpr char kTimeUnits[] = "s";        // units of time

// Array keys (1.2). An array key's log has `value` of rank 2 (changes x elements) or 3 (changes x
// rows x cols) in the key's own element dtype (sample_type.hpp), chunked and extendible along
// changes, with attributes kAttrDtype and kAttrArrayShape. A value whose element dtype or shape
// differs from the dataset's (fixed when the segment opens: SWMR cannot add datasets) is not
// logged; the log's group counts it in kAttrArrayRefused, and the next segment takes the new shape.
inline constexpr char kAttrArrayShape[] = "shape";           // u32[rank]: the shape of one value
inline constexpr char kAttrArrayRefused[] = "refused_rows";  // u64, on the key's group: values not logged
// A recorded rank-1 array key K with a recorded key K + kAxisSuffix of as many elements gets an
// NXdata beside the channels, /entry/<K> (/entry/<K> + kPlotCollisionSuffix when a channel has that
// name), written at each flush and at close with the latest values: signal = kPlotSignal, axes =
// the axis dataset (a key ending in kSpectrumSuffix: kPlotEnergy when the axis's units are an
// energy's, else kPlotPulseHeight; else kPlotAxis),
// <axis>_indices = 0, the axis's units from the text key K + kAxisSuffix + kUnitsSuffix, long_names.
inline constexpr char kAxisSuffix[] = "_axis";
inline constexpr char kUnitsSuffix[] = "_units";
inline constexpr char kSpectrumSuffix[] = ".spectrum";
inline constexpr char kPlotCollisionSuffix[] = "_key";
inline constexpr char kPlotSignal[] = "counts";
inline constexpr char kPlotEnergy[] = "energy";              // the axis, when its units are an energy's (2.0)
inline constexpr char kPlotPulseHeight[] = "pulse_height";   // the axis of an uncalibrated spectrum (2.0)
inline constexpr char kPlotAxis[] = "axis";
inline constexpr char kAttrPlotSource[] = "source_keys";  // text: "K, K_axis"

// Every text attribute and text dataset is a variable-length UTF-8 string (format 1.1). Format 1.0
// wrote stop_time and first_sample_time as fixed 32-byte NUL-padded strings and text key values as
// fixed ASCII: readers read both.

// Clock provenance (1.1). /entry/clock: attributes of the host clock's synchronisation when the
// segment opened, and the offsets table.
inline constexpr char kClock[] = "clock";                       // under /entry
inline constexpr char kAttrSampleClock[] = "sample_clock";      // text: which clocks stamped the blocks
inline constexpr char kAttrSyncSource[] = "sync_source";        // text: chrony/timesyncd/ptp, or "unknown"
inline constexpr char kAttrSynchronised[] = "synchronised";     // u32: 1 synchronised, 0 not or unknown
inline constexpr char kAttrSyncState[] = "adjtimex_state";      // i64: adjtimex's return value (TIME_OK 0 ... TIME_ERROR 5), -1 unknown
inline constexpr char kAttrSyncStatus[] = "adjtimex_status";    // u64: its STA_* flags
inline constexpr char kAttrSyncFlags[] = "adjtimex_flags";      // text: the set STA_* flags by name
inline constexpr char kAttrEstErrorUs[] = "est_error_us";       // i64: the kernel's estimated error, -1 unknown
inline constexpr char kAttrMaxErrorUs[] = "max_error_us";       // i64: its maximum error, -1 unknown
inline constexpr char kClockOffsets[] = "offsets";              // ClockOffsetRow rows: at open and at close
inline constexpr char kClockSteps[] = "clock_steps";            // per channel: ClockStepRow rows
inline constexpr char kSampleClockText[] =
    "block_realtime_ns: CLOCK_REALTIME, block_monotonic_ns: CLOCK_MONOTONIC, as the channel's writer "
    "stamped each block's first sample";

/// One look at both host clocks by the recorder: offset_ns = realtime_ns - monotonic_ns. event 0:
/// the segment opened (a run's start or a rotation), 1: it closed cleanly.
struct ClockOffsetRow {
  std::uint64_t realtime_ns = 0;
  std::uint64_t monotonic_ns = 0;
  std::int64_t offset_ns = 0;
  std::uint8_t event = 0;
};
inline constexpr std::uint8_t kClockOpened = 0;
inline constexpr std::uint8_t kClockClosed = 1;

/// A clock step between two consecutive blocks of a channel: the later block's realtime stamp is
/// jump_ns (negative) from the earlier one's. sequence, realtime_ns and monotonic_ns are those of
/// the later block.
struct ClockStepRow {
  std::uint64_t sequence = 0;
  std::int64_t jump_ns = 0;
  std::uint64_t realtime_ns = 0;
  std::uint64_t monotonic_ns = 0;
};

/// Their compound types (packed, the file's, or as in memory). Thread: one per process.
[[nodiscard]] Type clock_offset_row_type(bool packed);
[[nodiscard]] Type clock_step_row_type(bool packed);

/// Why a run of blocks is missing from a channel's data: core's one list of gap reasons, stored as
/// u8 in the gaps table, whose reason_names attribute lists kGapReasonNames in this order. 1.4 added
/// before_start, recorder_down, shutdown, source_loss (and made recorder_restart a 0-block marker);
/// 1.5 added kernel_drop, malformed, late, timeout, driver_error, and gap blocks' reasons come from
/// the writer (ChannelWriter::skip); sink_overflow came after, with the Kafka producer (a reader takes a
/// row's name from its table's reason_names, so older readers name it too).
using core::GapReason;
using core::gap_reason_name;
using core::kGapReasonCount;
using core::kGapReasonList;
using core::kGapReasonNames;

/// The reason of a block table row whose block_flags carry core::kBlockGapFlag (a block published as
/// a gap, no samples): the reason in the flags' low 8 bits; source_loss for a bare flag (before 1.5
/// such a row meant a block the source lost, and no writer publishes a gap as lapped, a reader's
/// loss) and for a reason this build does not know. Thread: any.
[[nodiscard]] constexpr GapReason flagged_row_reason(std::uint32_t flags) noexcept {
  const std::uint32_t reason = flags & core::kBlockGapReasonMask;
  return reason == 0 || reason >= kGapReasonCount ? GapReason::source_loss : static_cast<GapReason>(reason);
}

/// Fill values: rows a failed write left extended but unwritten read as these.
inline constexpr std::uint64_t kUnwrittenSequence = ~std::uint64_t{0};  // block_sequence of an unwritten row
inline constexpr std::uint8_t kUnwrittenReason = 255;                   // gaps reason of an unwritten row

/// One row of a gaps table as it is in memory (the file's rows are the same fields, packed).
struct GapRow {
  std::uint64_t sequence = 0;  // first missing block sequence (dropped_at_source: the next block's)
  std::uint64_t blocks = 0;
  std::uint8_t reason = 0;     // GapReason
  std::uint64_t realtime_ns = 0;
};

/// The compound type of GapRow: packed (25 bytes, the file's) or as in memory.
/// Thread: one per process (serial HDF5).
[[nodiscard]] Type gap_row_type(bool packed);

/// The link name of a frame channel's axis dataset: the axis name (escaped as encode_name does),
/// kDefaultFrameAxis when empty, plus kFrameAxisSuffix when a dataset of the group has that name
/// (a trigger's "time" axis becomes "time_in_frame"). Thread: any.
[[nodiscard]] std::string frame_axis_link(std::string_view axis_name);

/// The link name of a channel or key group: '%' -> "%25", '/' -> "%2F", a lone "." -> "%2E".
/// The kAttrChannel and kAttrKey attributes hold the names as they are. Thread: any.
[[nodiscard]] std::string encode_name(std::string_view name);

}  // namespace weir::h5
