#pragma once
// The encoded line of `weir bench recorder` (recorder_codec_cases.cpp). Private to bench/.
#include <string>

#include "harness.hpp"
#include "suite_report.hpp"

namespace weir::bench {

/// The recorder draining detector-like i16 codes through each codec (its encoder threads) into `dir`:
/// rows record.enc.<codec>.i16 (MB/s of samples in) against base.write.enc.i16 (plain write() of the
/// same bytes), fields ratio (bytes in / file bytes), mb_per_cpu_s (MB in per CPU second of the
/// recorder and its encoder threads) and durable_mb_s (until the file is fsynced).
void run_encoded_line(const Config& config, const std::string& dir, Results& results, Fields& fields);

}  // namespace weir::bench
