// librdkafka configurations and handles.
#include "rdkafka_handle.hpp"

#include <array>

#include <fmt/format.h>

namespace weir::kafka {

core::Result<std::pair<std::string, std::string>> parse_property(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return core::fail(core::Errc::invalid_argument,
                      fmt::format("librdkafka property '{}': give it as KEY=VALUE (e.g. security.protocol=SASL_SSL)", text));
  return std::pair{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

core::Result<rd_kafka_conf_t*> make_conf(const Properties& defaults, const Properties& user, const std::string& what) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  std::array<char, 512> error{};
  for (const Properties* list : {&defaults, &user})
    for (const auto& [key, value] : *list)
      if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error.data(), error.size()) != RD_KAFKA_CONF_OK) {
        rd_kafka_conf_destroy(conf);
        return core::fail(core::Errc::invalid_argument,
                          fmt::format("{}: librdkafka property {}={}: {}", what, key, value, error.data()));
      }
  return conf;
}

core::Result<Client> make_client(rd_kafka_type_t type, rd_kafka_conf_t* conf, const std::string& what) {
  std::array<char, 512> error{};
  rd_kafka_t* rk = rd_kafka_new(type, conf, error.data(), error.size());  // takes conf on success
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return core::fail(core::Errc::invalid_argument, fmt::format("{}: cannot make a Kafka client: {}", what, error.data()));
  }
  return Client(rk);
}

}  // namespace weir::kafka
