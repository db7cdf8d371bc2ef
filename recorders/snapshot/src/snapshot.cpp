// snapshot_to_hdf5: one HDF5 file per call, written under a temporary name and renamed into place
// only when complete, so the final name never holds a partial file.
#include "weir/snapshot/snapshot.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "parts.hpp"
#include "weir/core/channel.hpp"
#include "weir/core/clock.hpp"

namespace weir::rec {

namespace {

std::string errno_text(const char* call, int error) { return std::string(call) + ": " + std::strerror(error); }

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// fsync of a file or directory by path: the data, then the name, reach the disk.
core::Result<void> sync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return core::fail(core::Errc::io_error, errno_text("open", errno));
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0) return core::fail(core::Errc::io_error, errno_text("fsync", error));
  return {};
}

// Moves tmp to path; without overwrite an existing path is never replaced, even one that appeared
// while the snapshot was written.
core::Result<void> move_into_place(const std::string& tmp, const std::string& path, bool overwrite) {
  if (overwrite) {
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      return core::fail(core::Errc::io_error, errno_text("rename", errno));
    return {};
  }
  if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) return {};
  if (errno == EEXIST) return core::fail(core::Errc::already_exists, "the file exists (appeared while writing)");
  if (errno != EINVAL && errno != ENOSYS) return core::fail(core::Errc::io_error, errno_text("renameat2", errno));
  // A file system without RENAME_NOREPLACE: link() also refuses an existing name.
  if (::link(tmp.c_str(), path.c_str()) != 0) {
    return errno == EEXIST ? core::fail(core::Errc::already_exists, "the file exists (appeared while writing)")
                           : core::fail(core::Errc::io_error, errno_text("link", errno));
  }
  ::unlink(tmp.c_str());
  return {};
}

core::Result<void> write_root(hid_t file, const core::Arena& arena, std::uint64_t started_ns,
                              const SnapshotOptions& options) {
  const core::ArenaHeader& h = arena.header();
  for (auto ok : {detail::attr_text(file, "weir_format", kSnapshotFormat),
                  detail::attr_text(file, "weir_version", WEIR_SNAPSHOT_VERSION),
                  detail::attr_text(file, "arena", std::string(h.name, strnlen(h.name, sizeof(h.name)))),
                  detail::attr_text(file, "location", arena.location().describe()),
                  detail::attr_text(file, "host", host_name()), detail::attr_u64(file, "snapshot_ns", started_ns),
                  detail::attr_text(file, "snapshot_time", detail::iso8601_ns(started_ns)),
                  detail::attr_u64(file, "blocks_requested", options.blocks)})
    if (!ok) return ok;
  return {};
}

core::Result<void> write_stats(hid_t file, const SnapshotStats& s, std::uint64_t finished_ns) {
  const auto u64 = [&](const char* name, std::uint64_t v) { return detail::attr_u64(file, name, v); };
  for (auto ok :
       {u64("finished_ns", finished_ns), u64("keys", s.keys), u64("keys_busy", s.keys_busy),
        u64("keys_torn", s.keys_torn), u64("copies_retried", s.copies_retried), u64("writers_met", s.writers_met),
        u64("channels", s.channels), u64("blocks", s.blocks), u64("blocks_overwritten", s.blocks_overwritten),
        u64("vectors", s.vectors), u64("vectors_busy", s.vectors_busy), u64("vectors_torn", s.vectors_torn),
        u64("groups", s.groups), u64("consumers", s.consumers), u64("bytes_copied", s.bytes_copied)})
    if (!ok) return ok;
  return {};
}

// Everything between creating the temporary file and closing it.
core::Result<void> write_file(const std::string& tmp, const core::Arena& arena, const SnapshotOptions& options,
                              SnapshotStats& stats) {
  const std::uint64_t started_ns = static_cast<std::uint64_t>(core::realtime_ns());
  h5::File file(H5Fcreate(tmp.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT));
  if (!file) return tl::make_unexpected(h5::error("H5Fcreate", tmp));
  const hid_t f = file.get();
  const detail::Labels labels = detail::read_labels(arena);
  const std::vector<core::ChannelInfo> channels = core::list_channels(arena);
  std::vector<detail::LiveKey> live;
  // One part after another; the first failure ends the file (and the caller removes it).
  if (auto ok = write_root(f, arena, started_ns, options); !ok) return ok;
  if (auto ok = detail::write_arena(f, arena); !ok) return ok;
  if (auto ok = detail::write_labels(f, labels); !ok) return ok;
  if (auto ok = detail::write_groups(f, arena, stats); !ok) return ok;
  if (auto ok = detail::write_keys(f, arena, options, labels, live, stats); !ok) return ok;
  if (auto ok = detail::write_vectors(f, arena, options, live, stats); !ok) return ok;
  if (auto ok = detail::write_channels(f, arena, options, labels, channels, stats); !ok) return ok;
  if (auto ok = detail::write_consumers(f, arena, channels, stats); !ok) return ok;
  if (auto ok = write_stats(f, stats, static_cast<std::uint64_t>(core::realtime_ns())); !ok) return ok;
  if (!file.reset()) return tl::make_unexpected(h5::error("H5Fclose", tmp));
  return {};
}

}  // namespace

core::Result<SnapshotStats> snapshot_to_hdf5(const core::Arena& arena, const std::string& path,
                                             const SnapshotOptions& options) {
  const std::int64_t start_ns = core::monotonic_ns();
  const std::string what = "snapshot of " + arena.location().describe() + " to '" + path + "'";
  const auto failed = [&what](const core::Error& e) { return tl::make_unexpected(core::with_context(e, what)); };
  if (path.empty()) return core::fail(core::Errc::invalid_argument, what + ": no file name");
  struct stat st {};
  if (!options.overwrite && ::stat(path.c_str(), &st) == 0)
    return core::fail(core::Errc::already_exists, what + ": the file exists; pass overwrite (--force) to replace it");
  h5::quiet_errors();

  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  SnapshotStats stats;
  auto written = write_file(tmp, arena, options, stats);
  if (written && options.durable) {
    const std::int64_t sync_start = core::monotonic_ns();
    written = sync_path(tmp, O_RDONLY);
    stats.sync_ns = static_cast<std::uint64_t>(core::monotonic_ns() - sync_start);
  }
  if (written && ::stat(tmp.c_str(), &st) == 0) stats.file_bytes = static_cast<std::uint64_t>(st.st_size);
  if (written) written = move_into_place(tmp, path, options.overwrite);
  if (!written) {
    ::unlink(tmp.c_str());  // a failed snapshot leaves nothing behind, under either name
    return failed(written.error());
  }
  if (options.durable) {
    const std::int64_t sync_start = core::monotonic_ns();
    if (auto synced = sync_path(directory_of(path), O_RDONLY | O_DIRECTORY); !synced) return failed(synced.error());
    stats.sync_ns += static_cast<std::uint64_t>(core::monotonic_ns() - sync_start);
  }
  stats.elapsed_ns = static_cast<std::uint64_t>(core::monotonic_ns() - start_ns);
  return stats;
}

}  // namespace weir::rec
