#pragma once
// Every tunable of weir, one line of comment each. No magic numbers elsewhere.
#include <cstdint>

namespace weir::core {

inline constexpr std::uint32_t kCacheLine = 64;                  // alignment of every shared region and slot
inline constexpr std::uint32_t kHeaderBytes = 4096;              // the arena header takes the first page
inline constexpr std::uint32_t kMaxNameBytes = 63;               // arena name, without the terminating zero

inline constexpr std::uint32_t kDefaultSlotCount = 1024;         // KV slots when the creator names none
inline constexpr std::uint32_t kDefaultKeyBytes = 64;            // longest key when the creator names none
inline constexpr std::uint32_t kDefaultValueBytes = 4096;        // largest value when the creator names none
inline constexpr std::uint32_t kMaxSlotCount = 1U << 24;         // refuse geometry past 16 Mi slots
inline constexpr std::uint32_t kMaxKeyBytes = 1024;              // refuse keys longer than this at create
inline constexpr std::uint32_t kMaxValueBytes = 1U << 24;        // refuse values larger than 16 MiB at create
inline constexpr std::uint32_t kDefaultMaxProbe = 64;            // linear-probe window: a miss never looks further
inline constexpr std::uint64_t kMaxArenaBytes = 1ULL << 40;      // refuse arenas larger than 1 TiB
inline constexpr std::uint32_t kSizedLoadPercent = 70;           // an arena sized for N keys fills at most this share of its slots
inline constexpr std::uint32_t kSizedMaxProbe = 512;             // probe window of an arena sized for N keys (docs/design/kv.md, Sizing)
inline constexpr std::uint32_t kSizedHeadroomKeys = 64;          // keys an arena sized for N keys holds past N (status, request, answer keys)
inline constexpr std::uint32_t kVectorValueBytes = 512;          // value_bytes of an arena sized for vectors: an ann answer of 38 hits fits

inline constexpr std::uint32_t kGroupCount = 64;                 // signal groups, fixed by the 64-bit Bloom masks
inline constexpr std::uint32_t kLabelCapacity = 64;              // distinct label names per arena
inline constexpr std::uint32_t kWatcherCapacity = 64;            // watcher rows: one bit each in a group's waiter mask
inline constexpr std::uint32_t kDefaultGroupLogEntries = 256;    // change-log entries per group, a power of two
inline constexpr std::uint32_t kMaxGroupLogEntries = 1U << 20;   // refuse bigger change logs than this
inline constexpr std::uint32_t kBloomBitsPerLabel = 3;           // bits a label sets in a 64-bit Bloom mask
inline constexpr std::uint32_t kDefaultChannelCapacity = 16;     // channel descriptors reserved at create
inline constexpr std::uint32_t kChannelDescBytes = 1024;         // room per channel descriptor (reserved)
inline constexpr std::uint32_t kMaxChannelCapacity = 4096;       // refuse more channel descriptors than this
inline constexpr std::uint64_t kDefaultChannelDataBytes = 16ULL << 20;  // channel ring + pyramid pool at create
inline constexpr std::uint32_t kDefaultConsumerCapacity = 64;    // consumer-table rows reserved at create
inline constexpr std::uint32_t kConsumerBytes = 256;             // room per consumer row (reserved)
inline constexpr std::uint32_t kMaxConsumerCapacity = 4096;      // refuse more consumer rows than this
inline constexpr std::uint32_t kDefaultVectorDim = 768;          // float32 per vector when vectors are on
inline constexpr std::uint32_t kMaxVectorDim = 65536;            // refuse wider vectors than this
inline constexpr int kVectorScoreAttempts = 4;                   // in-place scores of one row tried before a search defers it
inline constexpr std::uint32_t kVectorDeferredRows = 64;         // held rows one search revisits after its pass; more are skipped
inline constexpr std::uint32_t kVectorPrefetchRows = 2;          // rows a search prefetches ahead of the one it scores (0: none)
inline constexpr std::uint32_t kSearchBatchQueries = 32;         // queries one batched pass scores; larger batches take more passes
inline constexpr std::uint32_t kSearchBatchRows = 64;            // rows a batched search scores against every query while they stay in cache
inline constexpr std::uint32_t kSearchPanelDims = 1024;          // widest vector a batched search's panel kernel takes (stack: 128 KiB of transposed queries)
inline constexpr std::uint32_t kSearchPanelMinQueries = 4;       // fewest queries a batched search puts in a panel of 16; fewer go through tiles
inline constexpr std::uint32_t kDefaultRingBlocks = 64;          // block slots per channel ring unless asked
inline constexpr std::uint32_t kMaxRingBlocks = 1U << 20;        // refuse rings with more block slots
inline constexpr std::uint32_t kMaxSamplesPerBlock = 1U << 24;   // refuse bigger blocks
inline constexpr std::uint32_t kPyramidLevels = 3;               // min/max pyramid levels per channel
inline constexpr std::uint32_t kPyramidFactor = 64;              // samples per level-0 entry; x64 per level
inline constexpr std::int64_t kDefaultWriterWaitNs = 1'000'000'000;  // a writer waits this long for a lossless reader
inline constexpr std::int64_t kConsumerDeadAfterNs = 5'000'000'000;  // a lossless reader silent this long is checked
inline constexpr std::uint32_t kAttachCapacity = 128;            // processes tracked as attached to one arena

inline constexpr int kReadSpins = 256;                           // reader retries on an odd epoch before slowing down
inline constexpr std::int64_t kStuckAfterNs = 2'000'000;         // an epoch odd this long gets its owner checked
inline constexpr std::int64_t kStuckPinAfterNs = 20'000'000;     // a pin held this long: its process died
inline constexpr std::int64_t kDefaultWaitNs = 100'000'000;      // bounded-retry writes and reads give up after this
inline constexpr std::int64_t kOpenReadyTimeoutNs = 2'000'000'000;  // attach waits this long for a creator to finish
inline constexpr std::int64_t kDefaultStopPollNs = 100'000'000;  // sleep_until() looks at its stop flag this often unless told
inline constexpr int kSlotCopySpinsBeforeYield = 64;           // SlotCopier: odd-epoch spins before giving the CPU away
inline constexpr int kDefaultSlotCopyAttempts = 64;            // SlotCopier: copies torn by a concurrent write before busy
inline constexpr std::uint32_t kDefaultMode = 0600;              // arena permission bits unless asked otherwise

}  // namespace weir::core
