#pragma once
// What every weir Kafka client is given: the brokers and librdkafka properties passed through as
// they are (security.protocol, sasl.mechanism, sasl.username, ssl.ca.location, ...), so SASL/SCRAM
// and TLS work as librdkafka documents them.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::kafka {

using Properties = std::vector<std::pair<std::string, std::string>>;

/// "key=value" -> {key, value}; fails naming the text when it has no '=' or an empty key.
/// Thread: any.
[[nodiscard]] core::Result<std::pair<std::string, std::string>> parse_property(std::string_view text);

}  // namespace weir::kafka
