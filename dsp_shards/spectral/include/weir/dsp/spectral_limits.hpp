#pragma once
// Tunables of the spectral DSP family, one line of comment each (the module's own luaconf.h:
// core/limits.hpp holds the arena's, and this module may not change it).
#include <cstdint>

namespace weir::dsp {

inline constexpr std::uint32_t kMinFftSize = 16;               // shortest frame the fft shard accepts
inline constexpr std::uint32_t kMaxFftSize = 1U << 20;         // longest frame the fft shard accepts
inline constexpr std::uint32_t kMaxFftPrimeFactor = 13;        // larger prime factors make FFTW allocate per execute
inline constexpr double kMaxOverlap = 0.95;                    // frames overlap at most this fraction of N
inline constexpr std::uint32_t kMaxAverages = 1U << 20;        // linear averaging over at most this many frames
inline constexpr float kDbFloor = 1e-30F;                      // power below this reads as -300 dB, not -inf
inline constexpr std::uint32_t kMinFirTaps = 3;                // shortest FIR the designer makes
inline constexpr std::uint32_t kMaxFirTaps = 1U << 16;         // longest FIR the designer makes
inline constexpr double kDefaultKaiserBeta = 8.6;              // Kaiser window: about -90 dB side lobes
inline constexpr std::uint32_t kMaxBiquadSections = 64;        // second-order sections in one cascade
inline constexpr std::uint32_t kMaxDecimation = 1024;          // largest integer decimation factor
inline constexpr double kDecimateCutoffFraction = 0.8;         // anti-alias cutoff, as a fraction of the new Nyquist
inline constexpr std::uint32_t kDecimateTapsPerFactor = 20;    // anti-alias FIR length per unit of the factor (+1)
inline constexpr std::uint32_t kFilterChunkSamples = 4096;     // filter shard: samples converted and filtered per step
inline constexpr const char* kWisdomFileName = "fftw3f.wisdom";  // under $XDG_CACHE_HOME/weir or ~/.cache/weir

}  // namespace weir::dsp
