#pragma once
// A socat pty pair for serial tests: two linked ptys in raw mode, at known paths in a scratch
// directory. available() is false (with the reason) when socat is not installed.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "scratch_dir.hpp"
#include "spawn.hpp"

namespace weir::test {

inline constexpr const char* kSocat = "/usr/bin/socat";

class SocatPair {
 public:
  explicit SocatPair(const ScratchDir& dir) : a_(dir.file("tty_a")), b_(dir.file("tty_b")) {
    if (::access(kSocat, X_OK) != 0) {
      why_ = std::string(kSocat) + " is not installed (Debian: socat)";
      return;
    }
    SpawnOptions quiet;
    quiet.err = null_.fd;  // socat -d -d reports the ptys on stderr: not needed with link=
    process_ = ChildProcess({kSocat, "-d", "-d", "pty,raw,echo=0,link=" + a_, "pty,raw,echo=0,link=" + b_}, quiet);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (std::filesystem::exists(a_) && std::filesystem::exists(b_)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    why_ = "socat made no pty pair within 10 s";
  }
  [[nodiscard]] bool available() const { return why_.empty(); }
  [[nodiscard]] const std::string& why() const { return why_; }
  [[nodiscard]] const std::string& a() const { return a_; }
  [[nodiscard]] const std::string& b() const { return b_; }
  /// Ends socat: both ptys vanish, as an unplugged USB adapter does.
  void unplug() { (void)process_.kill_and_reap(); }

 private:
  struct DevNull {
    int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    ~DevNull() {
      if (fd >= 0) ::close(fd);
    }
  };
  DevNull null_;
  std::string a_, b_, why_;
  ChildProcess process_;
};

}  // namespace weir::test
