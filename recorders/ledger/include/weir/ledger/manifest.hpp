#pragma once
// Checksum manifests of closed recordings (docs/design/recording.md, "Checksums"): beside each closed
// file FILE.h5 a manifest FILE.h5.sha256 that `sha256sum -c` reads (from the directory), with the
// file's size and run on a comment line that sha256sum skips:
//
//   # weir-manifest run=17 bytes=104857600
//   9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  daq1_run000017_0002.h5
//
// Written once, atomically (a temporary file, fsync, rename, fsync of the directory). `weir audit
// --verify` recomputes every manifest of a run and names each file that changed, is missing or
// has no manifest.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "weir/core/error.hpp"
#include "weir/ledger/audit.hpp"

namespace weir::ledger {

inline constexpr std::string_view kManifestSuffix = ".sha256";

/// A file's SHA-256 (64 lower-case hex digits) and size.
struct FileDigest {
  std::string sha256;
  std::uint64_t bytes = 0;
  std::uint64_t run = 0;  // the run the file belongs to (in the manifest's comment line)
};

/// FILE + ".sha256".
[[nodiscard]] std::filesystem::path manifest_path(const std::filesystem::path& file);

/// Reads the whole file and hashes it (OpenSSL's EVP SHA-256). Fails naming the file. Thread: any.
[[nodiscard]] core::Result<FileDigest> digest_file(const std::filesystem::path& file);

/// Writes FILE's manifest atomically and durably. Fails naming it. Thread: any.
[[nodiscard]] core::Result<void> write_manifest(const std::filesystem::path& file, const FileDigest& digest);

/// Reads a manifest (as write_manifest wrote it; `sha256sum` lines without the comment line are read
/// too, with bytes and run 0). Fails naming the manifest and the line that is not one.
[[nodiscard]] core::Result<FileDigest> read_manifest(const std::filesystem::path& manifest);

inline constexpr std::string_view kHandedSuffix = ".handed";

/// FILE + ".handed": the durable record of FILE's one successful hand-off (the `on_close` command).
[[nodiscard]] std::filesystem::path handed_path(const std::filesystem::path& file);

/// Whether FILE's hand-off succeeded (its marker is there). Thread: any.
[[nodiscard]] bool handed_over(const std::filesystem::path& file);

/// Writes FILE's hand-off marker atomically and durably: one JSON line (when, after how many tries, the
/// command). Fails naming it. Thread: any.
[[nodiscard]] core::Result<void> mark_handed(const std::filesystem::path& file, std::int64_t handed_ns,
                                             std::uint64_t attempts, const std::string& command);

/// One file's verdict in `weir audit --verify`.
struct FileCheck {
  std::filesystem::path path;
  std::string state;   // "ok", "changed" (digest or size differs), "missing" (a manifest, no file),
                       // "extra" (a closed file with no manifest), "open" (no manifest yet: SWMR-marked,
                       // its recorder running or killed), "unreadable" (file or manifest; see `detail`),
                       // "deleted" (by retention: its run record says so; not missing)
  std::string detail;  // what differs, or why it could not be read
};

struct Verification {
  std::vector<FileCheck> files;  // in segment order, missing ones last
  std::uint64_t bytes_hashed = 0;
  /// True when every file with a manifest is as it says and every closed file has one.
  [[nodiscard]] bool ok() const noexcept;
};

/// Recomputes the manifests of the audited run in `where` (the directory or FILE.h5 given to
/// audit_run) against its files. Thread: any.
[[nodiscard]] Verification verify_run(const std::filesystem::path& where, const Audit& audit);

}  // namespace weir::ledger
