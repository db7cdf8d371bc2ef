#pragma once
// CURVE key files, as `weir bridge keygen DIR/NAME` writes them: NAME.key holds the secret key
// (mode 0600) and NAME.pub the public key, each as one line of 40 Z85 characters. A receiver
// accepts exactly the senders whose NAME.pub files lie in its allowed-keys folder.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::bridge {

inline constexpr std::size_t kCurveKeyBytes = 32;  // a CURVE key, binary
inline constexpr std::size_t kCurveZ85Chars = 40;  // the same in Z85 text

using CurveKey = std::array<std::uint8_t, kCurveKeyBytes>;

/// Where keygen put the pair.
struct KeyFiles {
  std::string secret_path;  // STEM.key, mode 0600
  std::string public_path;  // STEM.pub, mode 0644
  std::string public_z85;
};

/// Makes a new key pair (zmq_curve_keypair) and writes STEM.key (0600, created exclusively: an
/// existing file is refused, never overwritten) and STEM.pub. Fails naming the file and the reason,
/// or saying this libzmq has no CURVE. Thread: any.
[[nodiscard]] core::Result<KeyFiles> write_keypair(const std::string& stem);

/// Reads a key file: one line of 40 Z85 characters (trailing whitespace allowed). Refuses a
/// missing file, another length, bad characters; and, for a secret key (`secret` set), a file that
/// others may read (mode & 077). Thread: any.
[[nodiscard]] core::Result<CurveKey> read_key(const std::string& path, bool secret);

/// The public key of a secret key. Thread: any.
[[nodiscard]] core::Result<CurveKey> public_of(const CurveKey& secret);

/// Every *.pub in a folder, read with read_key; refuses a missing folder, a bad file (naming it) and
/// a folder without any key. Thread: any.
[[nodiscard]] core::Result<std::vector<CurveKey>> read_allowed_keys(const std::string& folder);

/// A key as Z85 text (40 characters). Thread: any.
[[nodiscard]] std::string z85(const CurveKey& key);

/// How a bridge end secures its link. Unless plain is set, every field its role needs must be
/// given: a sender its secret key and the receiver's public key, a receiver its secret key and an
/// allowed-keys folder.
struct Security {
  bool plain = false;            // plain TCP: only when asked for explicitly
  std::string secret_key_file;   // this end's STEM.key
  std::string server_key_file;   // sender: the receiver's STEM.pub
  std::string allow_folder;      // receiver: the senders' STEM.pub files it accepts
};

}  // namespace weir::bridge
