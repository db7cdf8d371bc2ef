#pragma once
// librdkafka handles owned, and configurations built from weir's options with every error naming
// the property. Private to the kafka module.
#include <librdkafka/rdkafka.h>

#include <memory>
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
