#pragma once
// The codec line of `weir bench recorder` (codec_cases.cpp). Private to bench/.
#include "harness.hpp"
#include "suite_report.hpp"

namespace weir::bench {

/// Compresses detector-like i16 ADC codes chunk by chunk with each codec, config.reps times: rows
/// codec.<name>.i16 (MB/s of input a core, field ratio) against base.memcpy.i16.
void run_codec_line(const Config& config, Results& results, Fields& fields);

}  // namespace weir::bench
