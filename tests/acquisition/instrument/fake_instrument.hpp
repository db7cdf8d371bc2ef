#pragma once
// The fake SCPI instrument (fake_scpi.py) as a child process of a test: started on a free loopback
// port, told what to do over its own TCP control line, killed with the test.
#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "scratch_dir.hpp"
#include "spawn.hpp"

namespace weir::test {

inline constexpr const char* kPython = "/usr/bin/python3";

class FakeInstrument {
 public:
  /// Starts fake_scpi.py with `args` (e.g. {"--kind", "psu"}), its port file in `dir`.
  FakeInstrument(const ScratchDir& dir, const std::string& tag, const std::vector<std::string>& args = {}) {
    const std::string port_file = dir.file(tag + ".port");
    std::vector<std::string> argv{kPython, WEIR_FAKE_SCPI, "--port-file", port_file};
    argv.insert(argv.end(), args.begin(), args.end());
    process_.emplace(argv, CapturedProcess::Output::merged);
    REQUIRE(process_->valid());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline && !std::filesystem::exists(port_file) && process_->running())
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE_MESSAGE(std::filesystem::exists(port_file), process_->out());
    port_ = static_cast<std::uint16_t>(std::stoi(read_file(port_file)));
  }
  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] std::string output() const { return process_->out(); }

  /// Sends one line on a connection of its own; returns the reply line for a query ("...?").
  std::string control(const std::string& line) const {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port_);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    const std::string text = line + "\n";
    REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    std::string reply;
    if (!line.empty() && line.back() == '?') {
      pollfd p{fd, POLLIN, 0};
      while (reply.find('\n') == std::string::npos && ::poll(&p, 1, 10'000) > 0) {
        char buf[256];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) break;
        reply.append(buf, static_cast<std::size_t>(n));
      }
      if (const auto end = reply.find('\n'); end != std::string::npos) reply.resize(end);
    } else {
      // A command has no reply: a query after it on the same line proves it was handled.
      const std::string sync = "*OPC?\n";
      REQUIRE(::write(fd, sync.data(), sync.size()) == static_cast<ssize_t>(sync.size()));
      pollfd p{fd, POLLIN, 0};
      char buf[16];
      if (::poll(&p, 1, 10'000) > 0) (void)::read(fd, buf, sizeof buf);
    }
    ::close(fd);
    return reply;
  }

 private:
  std::optional<CapturedProcess> process_;
  std::uint16_t port_ = 0;
};

}  // namespace weir::test
