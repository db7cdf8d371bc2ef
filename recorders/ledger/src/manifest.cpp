// Checksum manifests (weir/ledger/manifest.hpp): SHA-256 by OpenSSL's EVP interface, written like
// every other file beside a run (durable_file.hpp).
#include "weir/ledger/manifest.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <set>
#include <sstream>

#include "durable_file.hpp"
#include "run_files.hpp"
#include "weir/core/unique_fd.hpp"

namespace weir::ledger {

namespace {

constexpr std::size_t kReadBytes = std::size_t{1} << 20;  // one read() of a file being hashed
constexpr std::string_view kCommentTag = "# weir-manifest";
constexpr std::size_t kHexDigits = 64;

struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const noexcept { EVP_MD_CTX_free(ctx); }
};

std::string hex(const unsigned char* bytes, unsigned n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::size_t{n} * 2);
  for (unsigned i = 0; i < n; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xF]);
  }
  return out;
}

// "key=N" in a comment line; false when absent or not a number.
bool field(std::string_view line, std::string_view key, std::uint64_t& out) {
  const std::string tag = " " + std::string(key) + "=";
  const std::size_t at = line.find(tag);
  if (at == std::string_view::npos) return false;
  const char* first = line.data() + at + tag.size();
  const auto [end, ec] = std::from_chars(first, line.data() + line.size(), out);
  return ec == std::errc{} && end != first;
}

bool is_hex(std::string_view text) {
  return text.size() == kHexDigits &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

std::filesystem::path manifest_path(const std::filesystem::path& file) { return file.string() + std::string(kManifestSuffix); }

core::Result<FileDigest> digest_file(const std::filesystem::path& file) {
  core::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return tl::make_unexpected(detail::io_failure("sha256", file, "cannot open", errno));
  (void)::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    return core::fail(core::Errc::io_error, "sha256 " + file.string() + ": EVP_DigestInit_ex failed");
  std::vector<unsigned char> buffer(kReadBytes);
  FileDigest digest;
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return tl::make_unexpected(detail::io_failure("sha256", file, "cannot read", errno));
    if (n == 0) break;
    if (EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<std::size_t>(n)) != 1)
      return core::fail(core::Errc::io_error, "sha256 " + file.string() + ": EVP_DigestUpdate failed");
    digest.bytes += static_cast<std::uint64_t>(n);
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned length = 0;
  if (EVP_DigestFinal_ex(ctx.get(), md.data(), &length) != 1)
    return core::fail(core::Errc::io_error, "sha256 " + file.string() + ": EVP_DigestFinal_ex failed");
  digest.sha256 = hex(md.data(), length);
  return digest;
}

core::Result<void> write_manifest(const std::filesystem::path& file, const FileDigest& digest) {
  std::ostringstream text;
  text << kCommentTag << " run=" << digest.run << " bytes=" << digest.bytes << "\n"
       << digest.sha256 << "  " << file.filename().string() << "\n";  // two spaces: text mode, as sha256sum writes
  return detail::write_atomically(manifest_path(file), text.str(), "manifest");
}

core::Result<FileDigest> read_manifest(const std::filesystem::path& manifest) {
  auto text = detail::read_text(manifest, "manifest");
  if (!text) return tl::make_unexpected(text.error());
  if (text->empty()) return core::fail(core::Errc::invalid_argument, "manifest " + manifest.string() + ": empty or missing");
  FileDigest digest;
  std::istringstream in(*text);
  std::string line;
  int number = 0;
  bool found = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    if (line.starts_with(kCommentTag)) {
      (void)field(line, "run", digest.run);
      (void)field(line, "bytes", digest.bytes);
      continue;
    }
    if (line[0] == '#') continue;
    const std::string_view sum = std::string_view(line).substr(0, std::min(line.size(), kHexDigits));
    if (found || !is_hex(sum) || line.size() < kHexDigits + 2)
      return core::fail(core::Errc::invalid_argument, "manifest " + manifest.string() + ":" + std::to_string(number) +
                                                        ": not one '<sha256>  <file>' line");
    digest.sha256 = std::string(sum);
    found = true;
  }
  if (!found) return core::fail(core::Errc::invalid_argument, "manifest " + manifest.string() + ": no checksum line");
  return digest;
}

std::filesystem::path handed_path(const std::filesystem::path& file) { return file.string() + std::string(kHandedSuffix); }

bool handed_over(const std::filesystem::path& file) {
  std::error_code ec;
  return std::filesystem::exists(handed_path(file), ec);
}

core::Result<void> mark_handed(const std::filesystem::path& file, std::int64_t handed_ns, std::uint64_t attempts,
                               const std::string& command) {
  std::string escaped;
  for (const char c : command) {
    if (c == '"' || c == '\\') escaped.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) continue;  // a control character has no place in a command line's echo
    escaped.push_back(c);
  }
  std::ostringstream text;
  text << "{\"file\": \"" << file.filename().string() << "\", \"handed_ns\": " << handed_ns << ", \"attempts\": " << attempts
       << ", \"command\": \"" << escaped << "\"}\n";
  return detail::write_atomically(handed_path(file), text.str(), "hand-off marker");
}

bool Verification::ok() const noexcept {
  return std::all_of(files.begin(), files.end(),
                     [](const FileCheck& f) { return f.state == "ok" || f.state == "open" || f.state == "deleted"; });
}

Verification verify_run(const std::filesystem::path& where, const Audit& audit) {
  Verification out;
  const detail::RunPlace place = detail::run_place(where);
  std::set<std::filesystem::path> seen;
  for (const FileState& f : audit.files) {
    seen.insert(f.path);
    FileCheck check{f.path, "ok", {}};
    if (f.state == "deleted") {  // by retention, on record: not missing
      out.files.push_back(FileCheck{f.path, "deleted", f.error});
      continue;
    }
    const std::filesystem::path manifest = manifest_path(f.path);
    std::error_code ec;
    if (!std::filesystem::exists(manifest, ec)) {
      const bool open = f.partial || f.state == "swmr-marked";
      check.state = open ? "open" : "extra";
      check.detail = open ? "no manifest yet: not closed (its recorder is running, or was killed: "
                            "a restart of the run closes it, or `weir repair` its marks)"
                          : "a " + f.state + " file of the run with no manifest";
      out.files.push_back(std::move(check));
      continue;
    }
    auto expected = read_manifest(manifest);
    auto actual = digest_file(f.path);
    if (!expected || !actual) {
      check.state = "unreadable";
      check.detail = !expected ? expected.error().what : actual.error().what;
    } else {
      out.bytes_hashed += actual->bytes;
      if (expected->bytes != 0 && expected->bytes != actual->bytes)
        check.detail = "size " + std::to_string(actual->bytes) + " bytes, the manifest says " + std::to_string(expected->bytes);
      if (expected->sha256 != actual->sha256)
        check.detail += (check.detail.empty() ? "" : "; ") + std::string("sha256 ") + actual->sha256 +
                        ", the manifest says " + expected->sha256;
      if (!check.detail.empty()) check.state = "changed";
    }
    out.files.push_back(std::move(check));
  }
  // Manifests of the run whose file is not there (FILE form: the run is in the manifest).
  for (const detail::RunFile& m : detail::list_manifests(place, kManifestSuffix)) {
    if (seen.count(m.path) != 0 || m.arena != (place.file_form ? std::string() : audit.arena)) continue;
    if (m.run_known && m.run != audit.run) continue;
    if (!m.run_known) {
      auto digest = read_manifest(manifest_path(m.path));
      if (digest && digest->run != audit.run) continue;
    }
    std::error_code ec;
    if (std::filesystem::exists(m.path, ec)) continue;  // another run's file (FILE form)
    out.files.push_back(FileCheck{m.path, "missing", "its manifest " + manifest_path(m.path).filename().string() + " is there, the file is not"});
  }
  return out;
}

}  // namespace weir::ledger
