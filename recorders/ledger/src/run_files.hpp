#pragma once
// Finding a run's files by name, as `weir record` names them: --out DIR writes
// DIR/<arena>_run<RUN, 6 digits>_<SEG, 4 digits>.h5, --out FILE.h5 writes FILE.h5, FILE_0001.h5, ...
// (the run in each file's `run` attribute), and the run record beside them
// (<prefix>_run<RUN, 6 digits>.ledger.json). A file still being written has ".partial" after its
// final name. Private to the audit. Thread: any.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace weir::ledger::detail {

/// A file of a directory that belongs to some run.
struct RunFile {
  std::filesystem::path path;
  std::string arena;            // DIR form: from the name; FILE form: ""
  std::uint64_t run = 0;        // DIR form: from the name; FILE form: 0 until the file is read
  std::uint64_t segment = 0;    // from the name
  bool record = false;          // a run record, not a recording
  bool run_known = true;        // FILE form: false until the file's run attribute was read
  bool partial = false;         // NAME.partial: not closed yet (being written, or its recorder was killed)
};

/// Where a run's files are looked for, and how they are named.
struct RunPlace {
  std::filesystem::path dir;
  bool file_form = false;  // FILE.h5: files stem.h5, stem_NNNN.h5
  std::string stem;        // FILE form's stem
};

/// DIR (an existing directory) or FILE.h5 (FILE form). Thread: any.
[[nodiscard]] RunPlace run_place(const std::filesystem::path& where);

/// The recordings and run records of `place`, sorted by (arena, run, segment); records in FILE
/// form carry their run from the name. Unreadable directories list nothing. Thread: any.
[[nodiscard]] std::vector<RunFile> list_run_files(const RunPlace& place);

/// The checksum manifests (FILE.h5.sha256) of `place` whose FILE.h5 is named like a recording: each
/// as the RunFile of that recording (`path` the recording's, which may be gone). Thread: any.
[[nodiscard]] std::vector<RunFile> list_manifests(const RunPlace& place, std::string_view suffix);

}  // namespace weir::ledger::detail
