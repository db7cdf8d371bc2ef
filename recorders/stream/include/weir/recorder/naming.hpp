#pragma once
// Where segments go and what they are called (docs/design/recording.md, "File names"):
//   --out DIR       DIR/<arena>_run<RUN, 6 digits>_<SEGMENT, 4 digits>.h5
//   --out FILE.h5   FILE.h5 first, then FILE_<NUMBER, 4 digits>.h5
// A segment being written is NAME.partial (NAME its final name); it takes its final name only once
// closed and, by the fsync policy, on the disk: a final name never holds a partial file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace weir::rec {

struct OutTarget {
  bool is_dir = true;
  std::filesystem::path dir;  // the directory the files go in
  std::string stem;           // FILE form: the file name without ".h5"
};

/// DIR unless `out` ends in ".h5". Thread: any.
[[nodiscard]] OutTarget parse_out(std::string_view out);

/// The name of segment `number` of `run` (FILE form: the file numbered `number`; run unused).
[[nodiscard]] std::filesystem::path segment_path(const OutTarget& target, std::string_view arena, std::uint64_t run,
                                                 std::uint64_t number);

/// The suffix of a segment being written (or left by a recorder killed while writing it).
inline constexpr std::string_view kPartialSuffix = ".partial";

/// NAME.partial: the name segment `final_name` has while it is written.
[[nodiscard]] std::filesystem::path partial_path(const std::filesystem::path& final_name);

struct SegmentName {
  std::filesystem::path path;  // as it is now: the final name, or NAME.partial
  bool partial = false;        // not closed yet (or its recorder was killed): path is NAME.partial
  std::string arena;        // DIR form: the arena part of the name; FILE form: empty
  std::uint64_t run = 0;    // DIR form: from the name; FILE form: 0 (read the file's run attribute)
  std::uint64_t number = 0;
};

/// The final name of a SegmentName (path without ".partial").
[[nodiscard]] std::filesystem::path final_path(const SegmentName& segment);

/// The recording files already in the target, sorted by (run, number). DIR form: every file named
/// like a segment, of any arena. FILE form: FILE.h5 and FILE_NNNN.h5. Both with or without
/// ".partial". Thread: any.
[[nodiscard]] std::vector<SegmentName> existing_segments(const OutTarget& target);

}  // namespace weir::rec
