#pragma once
// The bridge's wire format, declared once. Every message is a ZeroMQ message whose first frame
// begins with a WireHeader; what follows depends on its kind:
//
//   block     [WireHeader + payload][WireHeader + payload]...  one frame of one or more block records,
//                                 back to back: each a header of kind block and payload_bytes of
//                                 samples; the frame ends where its last record ends
//   describe  [WireHeader][ChannelDescription][labels: names, each ended by '\0']
//   mark      [WireHeader]        sequence = the next block the sender will send of that channel
//   gap       [WireHeader]        sequence = the first of gap_blocks blocks the near writer published
//                                 as a gap (ChannelWriter::skip), flags = kBlockGapFlag | its reason
//
// Version 2 carries a block in one frame (version 1 sent the payload as a second frame): one
// allocation and one frame per block instead of two. Version 3 adds the gap message, so the far
// side's gap blocks carry the near writer's reason. Version 4 lets a block frame carry several
// blocks: a sender that finds blocks waiting sends them in one message (one allocation, one
// encryption, one hand-off to the receiver for all of them). Receivers refuse other versions,
// counted as malformed, so both ends of a link run the same version.
//
// Fields are in the sender's native byte order; both ends must be little-endian (static_assert
// below), and a receiver refuses any other magic or version. A version change bumps
// kWireVersion and the static_asserts in the same commit.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace weir::bridge {

inline constexpr std::uint32_t kWireMagic = 0x5257'4557U;  // "WEWR" read as little-endian bytes
inline constexpr std::uint16_t kWireVersion = 4;
inline constexpr std::size_t kWireNameBytes = 64;   // channel and sender names, zero-terminated
inline constexpr std::size_t kWireTextBytes = 32;   // units, axis name and units

enum class MessageKind : std::uint16_t {
  block = 1,     // one published block of a channel
  describe = 2,  // what a channel is: sent when first seen, on every (re)connect and every second
  mark = 3,      // how far the sender has gone: blocks before `sequence` were sent or dropped
  gap = 4,       // a run of blocks the near writer published as a gap, and why (version 3)
};

// The first frame of every message.
struct WireHeader {                      // off size
  std::uint32_t magic;                   //   0   4  kWireMagic
  std::uint16_t version;                 //   4   2  kWireVersion
  std::uint16_t kind;                    //   6   2  MessageKind
  std::uint64_t session;                 //   8   8  random per sender start: tells a restart from a reorder
  std::uint32_t channel_id;              //  16   4  the sender's number for the channel in this session
  std::uint32_t flags;                   //  20   4  the block's driver flags; gap: kBlockGapFlag | reason
  std::uint64_t sequence;                //  24   8  the block's sequence in the sender's channel
  std::uint64_t first_sample;            //  32   8  its first sample's index in the sender's stream
  std::uint64_t realtime_ns;             //  40   8  acquisition time, ns since the epoch
  std::uint64_t monotonic_ns;            //  48   8  acquisition time, the sending host's CLOCK_MONOTONIC
  std::uint32_t samples;                 //  56   4  samples in the block
  std::uint32_t dtype;                   //  60   4  core::Dtype
  std::uint32_t frames_per_block;        //  64   4  frame shape (0: plain samples)
  std::uint32_t frame_elements;          //  68   4
  std::uint64_t payload_bytes;           //  72   8  block: payload bytes right after this header; else 0
  std::uint64_t sent_ns;                 //  80   8  CLOCK_REALTIME when sent: latency across the link
  std::uint64_t gap_blocks;              //  88   8  gap: blocks in the run (3; was reserved, zero); else 0
  char channel[kWireNameBytes];          //  96  64  the sender's channel name
};
static_assert(std::is_standard_layout_v<WireHeader> && std::is_trivially_copyable_v<WireHeader>);
static_assert(sizeof(WireHeader) == 160 && alignof(WireHeader) == 8);
static_assert(offsetof(WireHeader, session) == 8 && offsetof(WireHeader, sequence) == 24);
static_assert(offsetof(WireHeader, samples) == 56 && offsetof(WireHeader, payload_bytes) == 72);
static_assert(offsetof(WireHeader, gap_blocks) == 88 && offsetof(WireHeader, channel) == 96);
static_assert(std::endian::native == std::endian::little, "the wire format is little-endian");

// The second frame of a describe message: everything the receiver needs to create a matching
// channel, and which stream of blocks the sequences count.
struct ChannelDescription {              // off size
  std::uint64_t rate_bits;               //   0   8  f64 bits of the sample rate in Hz
  std::uint64_t stream_id;               //   8   8  the sender channel's created_ns: a recreated channel
                                         //           restarts its sequences, and says so by a new id
  std::uint32_t samples_per_block;       //  16   4
  std::uint32_t ring_blocks;             //  20   4
  std::uint32_t full_policy;             //  24   4  core::FullPolicy
  std::uint32_t label_count;             //  28   4  names in the labels frame
  std::int64_t wait_timeout_ns;          //  32   8
  std::uint64_t axis_start_bits;         //  40   8  f64 bits
  std::uint64_t axis_step_bits;          //  48   8  f64 bits
  std::uint64_t reserved0;               //  56   8  zero
  char units[kWireTextBytes];            //  64  32
  char axis_name[kWireTextBytes];        //  96  32
  char axis_units[kWireTextBytes];       // 128  32
  char axis_values_key[kWireNameBytes];  // 160  64
  char sender[kWireNameBytes];           // 224  64  the sending bridge's name (many-to-one)
};
static_assert(std::is_standard_layout_v<ChannelDescription> && std::is_trivially_copyable_v<ChannelDescription>);
static_assert(sizeof(ChannelDescription) == 288 && alignof(ChannelDescription) == 8);
static_assert(offsetof(ChannelDescription, wait_timeout_ns) == 32 && offsetof(ChannelDescription, units) == 64);
static_assert(offsetof(ChannelDescription, axis_values_key) == 160 && offsetof(ChannelDescription, sender) == 224);

/// A header of this kind with magic and version filled in, everything else zero. Thread: any.
[[nodiscard]] WireHeader make_header(MessageKind kind, std::uint64_t session) noexcept;

enum class [[nodiscard]] HeaderCheck : std::uint8_t { ok, wrong_size, wrong_magic, wrong_version, unknown_kind };

/// Whether a received first frame of `bytes` bytes begins with a header this build understands, and
/// is as long as its kind says: block records (each a block header and its payload_bytes) that end
/// exactly at the frame's end, or any other kind's header alone. Thread: any.
HeaderCheck check_header(const void* data, std::size_t bytes) noexcept;

/// Copies text into a fixed field, zero-terminated; false (and the field truncated) when it does
/// not fit. Thread: any.
bool copy_text(char* field, std::size_t field_bytes, std::string_view text) noexcept;
/// The text in a fixed field, up to its first '\0' (or the whole field). Thread: any.
[[nodiscard]] std::string_view field_text(const char* field, std::size_t field_bytes) noexcept;

}  // namespace weir::bridge
