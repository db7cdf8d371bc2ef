#pragma once
// The run-control topic, both ends: experiment control sends a pl72 (start) or 6s4t (stop), and
// a file-writer reads what arrives on the topic after it started listening.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "weir/core/error.hpp"
#include "weir/kafka/client_options.hpp"
#include "weir/kafka/run_messages.hpp"

namespace weir::kafka {

struct ControlOptions {
  std::string name;          // client.id weir-NAME
  std::string brokers;       // bootstrap.servers
  std::string topic;         // the control topic
  std::int64_t timeout_ns = 10'000'000'000;  // the longest wait for the cluster (delivery, metadata)
  Properties properties;     // librdkafka properties over weir's defaults
};

/// Produces `message` (keyed `key`) to the control topic, idempotent with acks=all, and waits for
/// its delivery report. Fails naming the brokers, the topic and librdkafka's reason, also when no
/// broker answered within timeout_ns. Cold path. Thread: any.
[[nodiscard]] core::Result<void> send_control(const ControlOptions& options, std::span<const std::byte> message,
                                              std::string_view key);

/// One message of the control topic.
struct ControlMessage {
  enum class Kind : std::uint8_t { start, stop, other, malformed };
  Kind kind = Kind::other;
  RunStart start;     // kind start
  RunStop stop;       // kind stop
  std::string error;  // kind malformed: what is wrong; other: the schema id
};

/// Reads the control topic from where it ended when open() looked (every partition's high
/// watermark), so a command sent after open() returned is always seen and older ones never are.
class ControlReader {
 public:
  /// Connects and assigns. Fails naming the brokers and the topic when the topic's metadata does
  /// not come within timeout_ns, or when `stop` is set meanwhile. Thread: one.
  [[nodiscard]] static core::Result<ControlReader> open(const ControlOptions& options, const std::atomic<bool>& stop);
  ControlReader(ControlReader&&) noexcept;
  ControlReader& operator=(ControlReader&&) noexcept;
  ~ControlReader();

  /// The next message, waiting at most wait_ms; nothing when none came. Thread: the opener's.
  [[nodiscard]] std::optional<ControlMessage> poll(int wait_ms);
  /// Consumer errors seen (broker trouble), counted, never fatal.
  [[nodiscard]] std::uint64_t errors() const noexcept;

 private:
  struct Impl;
  explicit ControlReader(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weir::kafka
