#pragma once
// Kafka parts declared in a pipeline file, as the options `weir kafka send|recv --pipeline FILE
// --part NAME` runs with and `weir check` / `weir run --check` check before anything starts.
//
//   kafka "send" {                       -- follows channels and keys, produces them to a topic
//     name = "daq1", brokers = "kafka1:9092,kafka2:9092", topic = "bl5_daq1_data",
//     channels = { "adc*" }, keys = { "psu.*" },          -- optional (every channel; no keys)
//     lossy = false, wait_ms = 10000, queue = 10000,       -- optional: back-pressure
//     status_topic = "bl5_daq1_status", status_ms = 2000,  -- optional: the x5f2 heartbeat
//     newest = false, flush_ms = 10000,                    -- optional
//     properties = { ["security.protocol"] = "SASL_SSL" }, -- optional: librdkafka properties
//   }
//   driver "kafka" {                     -- publishes one source's se00 messages into a channel
//     name = "far", brokers = "kafka1:9092", topic = "bl5_daq1_data",
//     channels = { "adc0" },             -- exactly one: the channel it writes
//     source = "adc0", group = "...", block = 1000, ring = 64, units = "V", newest = false,  -- optional
//     properties = { ... },              -- optional
//   }
#include <string_view>

#include "weir/config/pipeline.hpp"
#include "weir/core/error.hpp"
#include "weir/kafka/receiver.hpp"
#include "weir/kafka/sender.hpp"

namespace weir::kafka {

/// "HOST:PORT,HOST:PORT,..." (each entry may carry a scheme, SASL_SSL://HOST:PORT): an error
/// naming the first bad entry, or the empty list. Pure.
[[nodiscard]] core::Result<void> check_brokers(std::string_view brokers);

/// The sender's options from a `kafka "send"` declaration; its name is the part's. Errors
/// `file:line: kafka "NAME": ...` name the key: brokers checked (check_brokers), topic required,
/// every property known to librdkafka with a value it takes. Thread: any.
[[nodiscard]] core::Result<SenderOptions> sender_options(const config::KafkaDecl& decl);

/// The receiver's options from a `driver "kafka"` declaration; its name is the part's. Thread: any.
[[nodiscard]] core::Result<ReceiverOptions> receiver_options(const config::DriverDecl& decl);

/// sender_options for each of the pipeline's kafka parts: the first bad one's error. Thread: any.
[[nodiscard]] core::Result<void> check_kafka_senders(const config::Pipeline& pipeline);

/// receiver_options(decl), discarded: the check of a `driver "kafka"`. Thread: any.
[[nodiscard]] core::Result<void> check_receiver_driver(const config::Pipeline& pipeline, const config::DriverDecl& decl);

}  // namespace weir::kafka
