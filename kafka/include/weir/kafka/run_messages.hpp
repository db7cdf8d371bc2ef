#pragma once
// Run start and stop as the facility's experiment control sends them (NICOS to the ESS file-writer):
//
//   a run's start -> pl72  job_id (the writing job), run_name, filename, start_time and stop_time
//                          (ms since the epoch; stop_time 0: a 6s4t ends the run), service_id (which
//                          file-writer takes it), nexus_structure (the file's JSON description),
//                          metadata (JSON), instrument_name, control_topic
//   a run's stop  -> 6s4t  job_id, stop_time (ms since the epoch; 0: now), run_name, service_id,
//                          command_id
//   a file written -> wrdn service_id (the writer), job_id, file_name (full path),
//                          error_encountered, metadata (JSON), message: a file-writer's notice that
//                          it closed a job's file (weir: one per closed file, `weir kafka run written`)
//
// Cold path: one message per run start or stop, so the encoders return owned bytes. Decoders
// verify the buffer (FlatBuffers' Verifier and the file identifier) before they read it, and copy.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::kafka {

inline constexpr std::string_view kPl72 = "pl72";
inline constexpr std::string_view k6s4t = "6s4t";
inline constexpr std::string_view kWrdn = "wrdn";

/// A pl72 RunStart's fields (detector_spectrum_map, for ISIS, is neither sent nor read).
struct RunStart {
  std::uint64_t start_time_ms = 0;
  std::uint64_t stop_time_ms = 0;  // 0: open until a RunStop
  std::string run_name;
  std::string instrument_name;
  std::string nexus_structure;
  std::string job_id;
  std::string broker;
  std::string service_id;
  std::string filename;
  std::uint32_t n_periods = 1;
  std::string metadata;
  std::string control_topic;
};

/// A 6s4t RunStop's fields.
struct RunStop {
  std::uint64_t stop_time_ms = 0;  // 0: now
  std::string run_name;
  std::string job_id;
  std::string service_id;
  std::string command_id;
};

/// A wrdn FinishedWriting's fields: a file closed, and whether it is whole.
struct FinishedWriting {
  std::string service_id;  // required: the writer that wrote it
  std::string job_id;      // required: the job it belongs to
  bool error_encountered = false;
  std::string file_name;   // required: the file, with its full path
  std::string metadata;    // JSON
  std::string message;     // e.g. the error
};

/// The start as a pl72 message. Cold path. Thread: any.
[[nodiscard]] std::vector<std::byte> encode_pl72(const RunStart& start);
/// The stop as a 6s4t message. Cold path. Thread: any.
[[nodiscard]] std::vector<std::byte> encode_6s4t(const RunStop& stop);
/// The notice as a wrdn message. Cold path. Thread: any.
/// Requires: service_id, job_id and file_name not empty (the schema requires them).
[[nodiscard]] std::vector<std::byte> encode_wrdn(const FinishedWriting& done);

/// A pl72 message's fields (copied). Fails naming what is wrong: not pl72, a buffer that does not
/// verify, no job_id. Thread: any.
[[nodiscard]] core::Result<RunStart> decode_pl72(std::span<const std::byte> message);
/// A 6s4t message's fields (copied). Fails naming what is wrong: not 6s4t, a buffer that does not
/// verify, no job_id. Thread: any.
[[nodiscard]] core::Result<RunStop> decode_6s4t(std::span<const std::byte> message);
/// A wrdn message's fields (copied). Fails naming what is wrong: not wrdn, a buffer that does not
/// verify (which includes a required field missing), an empty job_id or file_name. Thread: any.
[[nodiscard]] core::Result<FinishedWriting> decode_wrdn(std::span<const std::byte> message);

}  // namespace weir::kafka
