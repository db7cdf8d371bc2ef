// CURVE key files: keygen, reading and checking them.
#include "weir/bridge/curve_keys.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace weir::bridge {

namespace {

using core::Errc;
using core::fail;

core::Result<void> write_new_file(const std::string& path, std::string_view text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    return fail(errno == EEXIST ? Errc::already_exists : Errc::io_error,
                fmt::format("{}: {}{}", path, std::strerror(errno), errno == EEXIST ? " (keygen never overwrites a key)" : ""));
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int saved = errno;
  const bool chmod_ok = ::fchmod(fd, mode) == 0;  // the umask must not widen or narrow it
  ::close(fd);
  if (!written || !chmod_ok) return fail(Errc::io_error, fmt::format("{}: {}", path, std::strerror(saved)));
  return {};
}

}  // namespace

std::string z85(const CurveKey& key) {
  char text[kCurveZ85Chars + 1] = {};
  (void)zmq_z85_encode(text, key.data(), key.size());
  return text;
}

core::Result<KeyFiles> write_keypair(const std::string& stem) {
  if (zmq_has("curve") == 0) return fail(Errc::invalid_argument, "this libzmq was built without CURVE");
  char pub[kCurveZ85Chars + 1] = {};
  char sec[kCurveZ85Chars + 1] = {};
  if (zmq_curve_keypair(pub, sec) != 0)
    return fail(Errc::io_error, fmt::format("zmq_curve_keypair: {}", zmq_strerror(zmq_errno())));
  KeyFiles files{stem + ".key", stem + ".pub", pub};
  if (auto ok = write_new_file(files.secret_path, std::string(sec) + "\n", 0600); !ok) return tl::make_unexpected(ok.error());
  std::memset(sec, 0, sizeof sec);
  if (auto ok = write_new_file(files.public_path, std::string(pub) + "\n", 0644); !ok) return tl::make_unexpected(ok.error());
  return files;
}

core::Result<CurveKey> read_key(const std::string& path, bool secret) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return fail(Errc::not_found, fmt::format("key file {}: {}", path, std::strerror(errno)));
  if (secret && (st.st_mode & 077) != 0)
    return fail(Errc::permission_denied,
                fmt::format("secret key file {}: mode {:04o} lets others read it; chmod 600 it", path, st.st_mode & 0777));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string line = text.str();
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())) != 0) line.pop_back();
  if (line.size() != kCurveZ85Chars)
    return fail(Errc::invalid_argument,
                fmt::format("key file {}: expected one line of {} Z85 characters, found {} characters", path,
                            kCurveZ85Chars, line.size()));
  CurveKey key{};
  if (zmq_z85_decode(key.data(), line.c_str()) == nullptr)
    return fail(Errc::invalid_argument, fmt::format("key file {}: not a Z85 key", path));
  return key;
}

core::Result<CurveKey> public_of(const CurveKey& secret) {
  char sec[kCurveZ85Chars + 1] = {};
  char pub[kCurveZ85Chars + 1] = {};
  (void)zmq_z85_encode(sec, secret.data(), secret.size());
  if (zmq_curve_public(pub, sec) != 0)
    return fail(Errc::invalid_argument, fmt::format("zmq_curve_public: {}", zmq_strerror(zmq_errno())));
  CurveKey key{};
  (void)zmq_z85_decode(key.data(), pub);
  return key;
}

core::Result<std::vector<CurveKey>> read_allowed_keys(const std::string& folder) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    return fail(Errc::not_found, fmt::format("allowed-keys folder {}: not a folder", folder));
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
    if (entry.path().extension() == ".pub") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<CurveKey> keys;
  for (const std::string& p : paths) {
    auto key = read_key(p, false);
    if (!key) return tl::make_unexpected(key.error());
    keys.push_back(*key);
  }
  if (keys.empty()) return fail(Errc::not_found, fmt::format("allowed-keys folder {}: no *.pub key files", folder));
  return keys;
}

}  // namespace weir::bridge
