#pragma once
// The codec line of `weir bench recorder` (codec_cases.cpp). Private to bench/.
#include <string>
#include <string_view>

#include "harness.hpp"
#include "suite_report.hpp"

namespace weir::bench {

/// A codec's name as part of a row name: "shuffle+deflate:1" -> "shuffle_deflate1".
[[nodiscard]] std::string codec_row_part(std::string_view codec);

/// Compresses detector-like i16 ADC codes chunk by chunk with each codec, config.reps times: rows
/// codec.<name>.i16 (MB/s of input a core, field ratio) against base.memcpy.i16.
void run_codec_line(const Config& config, Results& results, Fields& fields);

}  // namespace weir::bench
