#pragma once
// One channel the sender follows: the schema it goes as (ev44 for an event channel, hs01 for a
// framed channel with an axis, else se00, unless an override says otherwise), its fixed fields, the
// runs of blocks not sent since its last message, and the messages of a block. Private to the kafka
// module.
#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gap_header.hpp"
#include "weir/core/channel.hpp"
#include "weir/kafka/codec.hpp"
#include "weir/kafka/codec_frames.hpp"
#include "weir/kafka/sender.hpp"

namespace weir::kafka {

inline constexpr const char* kSeqHeader = "weir.seq";              // hs01: "SEQUENCE:FRAME:FRAMES"
inline constexpr const char* kEventsDroppedHeader = "weir.events_dropped";  // ev44: events left out

enum class Schema : std::uint8_t { se00, hs01, ev44 };

[[nodiscard]] const char* schema_name(Schema schema) noexcept;
/// "se00" -> Schema::se00 ...; false for any other text.
[[nodiscard]] bool parse_schema(std::string_view text, Schema& out) noexcept;

/// The schema a channel goes as: the first of `choices` whose pattern matches its name, else ev44 for
/// an event channel, hs01 for a framed channel whose axis has a name, else se00. Fails naming the
/// channel when that schema cannot carry it (c64; hs01 for an unframed channel; ev44 for a channel
/// that is not an event channel). Cold path.
[[nodiscard]] core::Result<Schema> pick_schema(const core::ChannelInfo& info, const std::vector<SchemaChoice>& choices);

// Delivery reports land here (the message's opaque), in rd_kafka_poll on the sender's thread.
struct Tally {
  std::uint64_t delivered = 0, failed = 0;
};

struct Encoders {
  Se00Encoder se00;
  Hs01Encoder hs01;
  Ev44Encoder ev44;
};

struct Outgoing {
  /// Fills the channel's fixed fields; hs01's bin boundaries from the axis (its values key, an f64
  /// array key, when it is set and holds one value per element). Cold path.
  Outgoing(const core::Arena& arena, const core::ChannelInfo& info, Schema kind, core::ChannelReader r);

  /// Adds a run of blocks not sent; notes when the first pending run began. Cold path (runs are rare).
  void add_gap(std::uint64_t first, std::uint64_t count, core::GapReason reason);
  /// The last sequence of the pending runs. Requires: !pending.empty().
  [[nodiscard]] std::uint64_t last_pending() const noexcept { return pending.back().first + pending.back().count - 1; }

  /// Frames in a block of `samples` samples (hs01), 1 for the other schemas.
  [[nodiscard]] std::uint32_t frames(std::uint32_t samples) const noexcept;
  /// Message `frame` of a block whose samples are at `data` (se00 and ev44: the one message). ev44's
  /// events left out are added to `events_dropped`. Hot path: no allocation once grown.
  [[nodiscard]] std::span<const std::byte> encode(Encoders& e, const core::BlockView& view, const std::byte* data,
                                                  std::uint32_t frame, std::uint32_t& events_dropped);
  /// A gap carrier: no values, counter = last_pending(). Requires: !pending.empty().
  [[nodiscard]] std::span<const std::byte> encode_carrier(Encoders& e);

  std::string name;
  core::ChannelReader reader;
  Schema schema;
  SampleBlock block;                // se00: the channel's fields filled in once
  std::uint32_t sample_bytes = 0;
  std::uint32_t frame_elements = 0;  // hs01
  double frame_ns = 0;               // hs01: time between a block's frames
  std::string label, unit, units;    // hs01: the axis's name and units; the data's units
  std::vector<double> boundaries;    // hs01: frame_elements + 1 bin edges
  std::int64_t metadata_ns = 0;      // hs01: when the axis was read
  std::vector<std::byte> scratch;    // hs01: a block of several frames, copied before it is sent
  std::vector<GapRun> pending;       // runs not sent since the last message (gap_header.hpp)
  std::int64_t pending_since_ns = 0;  // monotonic: when the first pending run was added
  Tally tally;
  SenderChannelReport report;
  std::uint64_t blocks_sent = 0;
};

/// The Kafka headers of a channel's message: "weir.gaps" for `pending` runs, "weir.seq" (`seq`, hs01),
/// "weir.events_dropped" (ev44, when not 0); nullptr when there are none. Cold unless gaps pend or
/// the schema is hs01 (librdkafka allocates for every message anyway).
[[nodiscard]] rd_kafka_headers_t* message_headers(const std::vector<GapRun>& pending, std::string_view seq,
                                                  std::uint32_t events_dropped);

/// One message produced to `topic` (librdkafka copies it) with `opaque` for its delivery report;
/// `headers` become librdkafka's when produced, else they are freed here. Thread: the producer's.
rd_kafka_resp_err_t produce_message(rd_kafka_t* rk, rd_kafka_topic_t* topic, std::span<const std::byte> value,
                                    std::string_view key, rd_kafka_headers_t* headers, void* opaque) noexcept;

}  // namespace weir::kafka
