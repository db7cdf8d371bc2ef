// kafka.NAME.FIELD keys -> weir_kafka_* families. A client is a sender when it keeps `sent`, a
// receiver when it keeps `received`; its name may hold dots (a host name), so FIELD is what follows
// the last one.
#include "kafka_metrics.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "metric_family.hpp"
#include "weir/serve/metrics.hpp"

namespace weir::serve {

namespace {

constexpr std::string_view kPrefix = "kafka.";
constexpr double kSecondsPerNs = 1e-9;

enum class Role : std::uint8_t { send, recv };

struct Client {
  Role role = Role::send;
  std::map<std::string, std::uint64_t, std::less<>> u64;  // field -> value
  std::string link;
};

// One exported series: the family it goes in, the key's field, the role that keeps it, and the
// `outcome` label for families that have one.
struct Series {
  std::string_view family;
  std::string_view field;
  Role role;
  std::string_view outcome;  // "" for families without the label
};

constexpr std::array kCounters{
    // Messages (a block each, for se00) by what became of them, on each side.
    Series{"weir_kafka_messages_total", "sent", Role::send, "sent"},
    Series{"weir_kafka_messages_total", "delivered", Role::send, "delivered"},
    Series{"weir_kafka_messages_total", "failed", Role::send, "failed"},
    Series{"weir_kafka_messages_total", "dropped", Role::send, "dropped"},
    Series{"weir_kafka_messages_total", "lost", Role::send, "lost"},
    Series{"weir_kafka_messages_total", "received", Role::recv, "received"},
    Series{"weir_kafka_messages_total", "late", Role::recv, "late"},
    Series{"weir_kafka_messages_total", "dropped", Role::recv, "dropped"},
    Series{"weir_kafka_messages_total", "refused", Role::recv, "refused"},
    Series{"weir_kafka_messages_total", "other", Role::recv, "other"},
    Series{"weir_kafka_messages_total", "malformed", Role::recv, "malformed"},
    Series{"weir_kafka_bytes_total", "bytes", Role::send, ""},
    Series{"weir_kafka_bytes_total", "bytes", Role::recv, ""},
    Series{"weir_kafka_gap_blocks_total", "gaps", Role::send, ""},
    Series{"weir_kafka_gap_blocks_total", "gaps", Role::recv, ""},
    Series{"weir_kafka_offset_gaps_total", "offset_gaps", Role::recv, ""},
    Series{"weir_kafka_errors_total", "errors", Role::recv, ""},
    Series{"weir_kafka_waits_total", "waits", Role::send, ""},
    Series{"weir_kafka_keys_total", "keys_sent", Role::send, "sent"},
    Series{"weir_kafka_keys_total", "keys_skipped", Role::send, "skipped"},
    Series{"weir_kafka_status_messages_total", "status_sent", Role::send, ""},
};

constexpr std::array kGauges{
    Series{"weir_kafka_queue_messages", "in_queue", Role::send, ""},
    Series{"weir_kafka_lag_messages", "lag", Role::recv, ""},
    Series{"weir_kafka_channels", "channels", Role::send, ""},
    Series{"weir_kafka_partitions", "partitions", Role::recv, ""},
};

struct Help {
  std::string_view family, type, help;
};

constexpr std::array kHelp{
    Help{"weir_kafka_messages_total", "counter",
         "Kafka messages by outcome: a sender's sent (taken by librdkafka), delivered, failed (delivery gave up), dropped "
         "(sink_overflow) and lost (not read in time); a receiver's received, late (duplicates, dropped), dropped (its "
         "channel full), refused, other (other sources or schemas) and malformed."},
    Help{"weir_kafka_bytes_total", "counter", "Bytes sent (whole messages) or received (samples published)."},
    Help{"weir_kafka_gap_blocks_total", "counter",
         "Gap blocks: passed on by a sender (its writer's gaps), published by a receiver (every missing message counter)."},
    Help{"weir_kafka_offset_gaps_total", "counter", "Partition offsets a receiver found missing."},
    Help{"weir_kafka_errors_total", "counter", "Consumer errors a receiver was told of."},
    Help{"weir_kafka_waits_total", "counter", "Times a lossless sender waited for librdkafka's full queue."},
    Help{"weir_kafka_wait_seconds_total", "counter", "Seconds a lossless sender waited for librdkafka's full queue."},
    Help{"weir_kafka_keys_total", "counter", "Key updates a sender sent as f144, or skipped (a type f144 cannot carry)."},
    Help{"weir_kafka_status_messages_total", "counter", "x5f2 heartbeats a sender sent."},
    Help{"weir_kafka_queue_messages", "gauge", "Messages a sender's librdkafka holds without a delivery report yet."},
    Help{"weir_kafka_lag_messages", "gauge", "Messages a receiver is behind the partitions' high watermarks."},
    Help{"weir_kafka_channels", "gauge", "Channels a sender follows."},
    Help{"weir_kafka_partitions", "gauge", "Partitions assigned to a receiver."},
    Help{"weir_kafka_link_info", "gauge",
         "A client's link state as a label (sending, idle; waiting, assigned), always 1."},
};

const Help& help_of(std::string_view family) {
  return *std::find_if(kHelp.begin(), kHelp.end(), [&](const Help& h) { return h.family == family; });
}

std::string_view role_name(Role r) { return r == Role::send ? "send" : "recv"; }

std::string labels(const std::string& name, Role role, std::string_view outcome) {
  std::string out = fmt::format("name=\"{}\",role=\"{}\"", escape_label(name), role_name(role));
  if (!outcome.empty()) out += fmt::format(",outcome=\"{}\"", outcome);
  return out;
}

std::map<std::string, Client> read_clients(const core::KvStore& kv) {
  std::map<std::string, std::map<std::string, std::uint64_t, std::less<>>> u64;  // name -> field -> value
  std::map<std::string, std::string> links;
  kv.for_each_key([&](std::string_view key, const core::ValueInfo& info) {
    if (!key.starts_with(kPrefix)) return;
    const std::size_t dot = key.rfind('.');
    if (dot <= kPrefix.size() || dot + 1 == key.size()) return;
    std::string name(key.substr(kPrefix.size(), dot - kPrefix.size()));
    std::string field(key.substr(dot + 1));
    if (info.type == core::ValueType::u64) {
      std::uint64_t bits = 0;
      core::ValueType type = core::ValueType::none;
      if (kv.get_scalar(key, bits, type) == core::KvStatus::ok && type == core::ValueType::u64) u64[name][field] = bits;
    } else if (info.type == core::ValueType::text && field == "link") {
      std::array<char, 64> buf{};
      core::ValueInfo got;
      if (kv.get(key, std::as_writable_bytes(std::span{buf}), got) == core::KvStatus::ok)
        links[name] = std::string(buf.data(), std::min<std::size_t>(got.length, buf.size()));
    }
  });
  std::map<std::string, Client> clients;
  for (auto& [name, fields] : u64) {
    const bool sender = fields.count("sent") != 0, receiver = fields.count("received") != 0;
    if (sender == receiver) continue;  // neither (not a Kafka client's keys) or both: not ours to guess
    Client& c = clients[name];
    c.role = sender ? Role::send : Role::recv;
    c.u64 = std::move(fields);
    if (const auto it = links.find(name); it != links.end()) c.link = it->second;
  }
  return clients;
}

// The samples of every series in `table` for one family, in the clients' order; no family at all
// when no client keeps any of its keys.
template <std::size_t N>
void write_family(std::string& out, std::string_view family, const std::array<Series, N>& table,
                  const std::map<std::string, Client>& clients) {
  std::string samples;
  bool any = false;
  for (const auto& [name, c] : clients)
    for (const Series& s : table) {
      if (s.family != family || s.role != c.role) continue;
      const auto it = c.u64.find(s.field);
      if (it == c.u64.end()) continue;
      samples += fmt::format("{}{{{}}} {}\n", family, labels(name, c.role, s.outcome), it->second);
      any = true;
    }
  if (!any) return;
  const Help& h = help_of(family);
  Family(out, h.family, h.type, h.help);
  out += samples;
}

}  // namespace

void append_kafka_metrics(std::string& out, const core::KvStore& kv) {
  const std::map<std::string, Client> clients = read_clients(kv);
  if (clients.empty()) return;
  for (std::string_view family : {"weir_kafka_messages_total", "weir_kafka_bytes_total", "weir_kafka_gap_blocks_total",
                                  "weir_kafka_offset_gaps_total", "weir_kafka_errors_total", "weir_kafka_waits_total",
                                  "weir_kafka_keys_total", "weir_kafka_status_messages_total"})
    write_family(out, family, kCounters, clients);
  {
    std::string samples;
    for (const auto& [name, c] : clients)
      if (const auto it = c.u64.find("wait_ns"); c.role == Role::send && it != c.u64.end())
        samples += fmt::format("weir_kafka_wait_seconds_total{{{}}} {}\n", labels(name, c.role, ""),
                               static_cast<double>(it->second) * kSecondsPerNs);
    if (!samples.empty()) {
      const Help& h = help_of("weir_kafka_wait_seconds_total");
      Family(out, h.family, h.type, h.help);
      out += samples;
    }
  }
  for (std::string_view family : {"weir_kafka_queue_messages", "weir_kafka_lag_messages", "weir_kafka_channels",
                                  "weir_kafka_partitions"})
    write_family(out, family, kGauges, clients);
  std::string links;
  for (const auto& [name, c] : clients)
    if (!c.link.empty())
      links += fmt::format("weir_kafka_link_info{{{},link=\"{}\"}} 1\n", labels(name, c.role, ""), escape_label(c.link));
  if (!links.empty()) {
    const Help& h = help_of("weir_kafka_link_info");
    Family(out, h.family, h.type, h.help);
    out += links;
  }
}

}  // namespace weir::serve
