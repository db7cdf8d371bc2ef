#pragma once
// librdkafka handles owned, and configurations built from weir's options with every error naming
// the property. Private to the kafka module.
#include <librdkafka/rdkafka.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>
#include <string>

#include "weir/core/error.hpp"
#include "weir/kafka/client_options.hpp"

namespace weir::kafka {

struct ClientDeleter {
  void operator()(rd_kafka_t* rk) const noexcept { rd_kafka_destroy(rk); }
};
struct TopicDeleter {
  void operator()(rd_kafka_topic_t* rkt) const noexcept { rd_kafka_topic_destroy(rkt); }
};
using Client = std::unique_ptr<rd_kafka_t, ClientDeleter>;
using Topic = std::unique_ptr<rd_kafka_topic_t, TopicDeleter>;

/// A configuration with `defaults`, then `user` over them (the user's word wins). `what` begins
/// every error ("kafka send daq1"). Thread: any.
[[nodiscard]] core::Result<rd_kafka_conf_t*> make_conf(const Properties& defaults, const Properties& user,
                                                       const std::string& what);

/// A client of `type` that takes `conf` (destroyed on failure). Thread: any.
[[nodiscard]] core::Result<Client> make_client(rd_kafka_type_t type, rd_kafka_conf_t* conf, const std::string& what);

}  // namespace weir::kafka

namespace weir::kafka {

/// A message's payload where FlatBuffers may read it: librdkafka gives no alignment, and a
/// FlatBuffer's fields are read as aligned integers, so a payload off an 8-byte boundary is copied
/// into `scratch` (grown once to the largest message, reused after) and viewed there. Hot path: no
/// allocation once `scratch` has grown.
[[nodiscard]] inline std::span<const std::byte> aligned_payload(const rd_kafka_message_t& m,
                                                                std::vector<std::byte>& scratch) {
  const auto* p = static_cast<const std::byte*>(m.payload);
  if (p == nullptr || m.len == 0) return {};
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(std::uint64_t) == 0) return {p, m.len};
  if (scratch.size() < m.len) scratch.resize(m.len);  // operator new: aligned for any scalar
  std::memcpy(scratch.data(), p, m.len);
  return {scratch.data(), m.len};
}

}  // namespace weir::kafka
