-- Kafka in a pipeline: two simulated channels produced to a topic as ESS se00 messages (with the
-- psu.* keys as f144 and an x5f2 heartbeat), and one of them read back off the topic into a channel
-- of the same arena, as a second box would. Try it without a cluster:
--   weir kafka mock --brokers 3 --topic lab_daq1_data --topic lab_daq1_status   # prints HOST:PORT,...
--   (write what it printed as brokers below, both places)
--   weir run examples/pipelines/kafka_loopback.lua           # status: kafka daq1 N msg/s, queue, lag
--   weir serve kafka_loopback &  curl -s localhost:8080/metrics | grep weir_kafka_
-- Against a facility cluster: its brokers, and properties for its security (SASL/SCRAM, TLS).
arena { name = "kafka_loopback", channels = 8, consumers = 32 }

channel "adc0" { dtype = "f32", rate = 200e3, block = 1000, ring = 256, units = "V" }
channel "adc1" { dtype = "f32", rate = 200e3, block = 1000, ring = 256, units = "V" }
channel "far_adc0" { dtype = "f32", rate = 200e3, block = 1000, ring = 256, units = "V" }

driver "sim" { channels = { "adc0", "adc1" }, signal = "sine", frequency = 1000 }

kafka "send" {
  name = "daq1",
  brokers = "127.0.0.1:9092",
  topic = "lab_daq1_data",
  channels = { "adc*" },
  keys = { "psu.*" },
  lossy = false,                       -- lossless: the writer waits for the producer (up to wait_ms)
  status_topic = "lab_daq1_status",
  properties = { ["linger.ms"] = 5 },  -- any librdkafka property, e.g. ["security.protocol"] = "SASL_SSL"
}

driver "kafka" {                       -- the far side: adc0's messages into far_adc0
  name = "far",
  channels = { "far_adc0" },
  brokers = "127.0.0.1:9092",
  topic = "lab_daq1_data",
  source = "adc0",
}
