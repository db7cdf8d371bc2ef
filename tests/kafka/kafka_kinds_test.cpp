// Each channel in the schema that fits it, through a 3-broker mock cluster (replication 3), read
// back with a plain librdkafka consumer: the fft shard's spectra and a histogram channel of several
// frames a block as hs01, the MCA shard's pulses and an event channel with a gap and offsets beyond
// int32 as ev44 (the shards real `weir shard` processes on a real `weir sim`), every message checked
// against the arena's blocks, exact counts. And the gap carrier: a run of
// gap blocks after a channel's last message goes alone at stop, or after --gap-carrier-ms.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <string>

#include "kafka_harness.hpp"
#include "topic_reader.hpp"
#include "weir/core/event_record.hpp"
#include "weir/kafka/codec.hpp"
#include "weir/kafka/codec_frames.hpp"

namespace weir::test {

namespace {

constexpr std::uint32_t kMaxEvents = 6;
constexpr std::uint32_t kBins = 16;        // the histogram channel: 3 frames of 16 bins a block
constexpr std::uint32_t kFrames = 3;
constexpr double kEventRate = 1e5;
constexpr std::uint64_t kStamp0 = 1'700'000'000'000'000'000ULL;

// Event e of block s: every 10th block has one event 3 s after its stamp (no int32 offset: dropped).
double event_field(std::uint64_t s, std::uint32_t e, core::EventField f) {
  switch (f) {
    case core::EventField::time_offset_ns:
      return (s % 10 == 3 && e == 0) ? 3e9 : 1000.0 * (e + 1) - static_cast<double>(s % 7) * 100.0;
    case core::EventField::height: return static_cast<double>(s) + e / 8.0;
    case core::EventField::id: return static_cast<double>((s + e) % 5);
    case core::EventField::flags: return 0;
  }
  return 0;
}

void publish_events(core::ChannelWriter& w, std::uint64_t blocks) {
  for (std::uint64_t b = 0; b < blocks; ++b) {
    std::span<std::byte> slot;
    REQUIRE(w.claim(slot) == core::ClaimStatus::ok);
    const std::uint64_t s = w.next_sequence();
    const auto events = static_cast<std::uint32_t>(s % (kMaxEvents + 1));
    for (std::uint32_t e = 0; e < events; ++e)
      for (std::uint32_t f = 0; f < core::kEventFields; ++f) {
        const double v = event_field(s, e, static_cast<core::EventField>(f));
        std::memcpy(slot.data() + (std::size_t{e} * core::kEventFields + f) * sizeof v, &v, sizeof v);
      }
    w.publish(events * core::kEventFields, kStamp0 + s * 1'000'000, 1);
  }
}

// Block s of the histogram channel: s % 4 == 3 holds 2 frames, the others 3; bin i of frame f counts s*100+f*20+i.
void publish_histograms(core::ChannelWriter& w, std::uint64_t blocks) {
  for (std::uint64_t b = 0; b < blocks; ++b) {
    std::span<std::byte> slot;
    REQUIRE(w.claim(slot) == core::ClaimStatus::ok);
    const std::uint64_t s = w.next_sequence();
    const std::uint32_t frames = s % 4 == 3 ? 2 : kFrames;
    for (std::uint32_t i = 0; i < frames * kBins; ++i) {
      const auto v = static_cast<std::uint32_t>(s * 100 + (i / kBins) * 20 + i % kBins);
      std::memcpy(slot.data() + std::size_t{i} * sizeof v, &v, sizeof v);
    }
    w.publish(frames * kBins, kStamp0 + s * 1'000'000, 1);
  }
}

std::uint32_t hist_frames(std::uint64_t s) { return s % 4 == 3 ? 2 : kFrames; }

// Checks an ev44 message against its event block: its stamp, and each event's time offset and id
// (events whose offset does not fit an int32 left out). Returns the events that differ.
std::uint64_t check_events(const kafka::EventMessage& e, std::span<const std::byte> block, const core::BlockRecord& rec) {
  REQUIRE(e.reference_time.size() == 1);
  CHECK(e.reference_time[0] == static_cast<std::int64_t>(rec.realtime_ns));
  REQUIRE(e.reference_time_index.size() == 1);
  CHECK(e.reference_time_index[0] == 0);
  REQUIRE(e.pixel_id.size() == e.time_of_flight.size());
  std::uint64_t wrong = 0;
  std::size_t k = 0;
  for (std::uint32_t i = 0; i < rec.samples / core::kEventFields; ++i) {
    double record[core::kEventFields];
    std::memcpy(record, block.data() + std::size_t{i} * sizeof record, sizeof record);
    const double offset = std::nearbyint(record[static_cast<std::size_t>(core::EventField::time_offset_ns)]);
    if (offset > 2147483647.0 || offset < -2147483648.0) continue;
    REQUIRE(k < e.time_of_flight.size());
    wrong += e.time_of_flight[k] == static_cast<std::int32_t>(offset) ? 0 : 1;
    wrong += e.pixel_id[k] == static_cast<std::int32_t>(record[static_cast<std::size_t>(core::EventField::id)]) ? 0 : 1;
    ++k;
  }
  CHECK(k == e.time_of_flight.size());
  return wrong;
}

struct Seq {
  std::uint64_t sequence = 0;
  std::uint32_t frame = 0, frames = 0;
};

Seq parse_seq(const std::string& text) {
  Seq s;
  REQUIRE(std::sscanf(text.c_str(), "%lu:%u:%u", &s.sequence, &s.frame, &s.frames) == 3);
  return s;
}

void make_framed(const core::Arena& arena, const std::string& name, core::Dtype dtype, core::FrameShape frame,
                 double rate_hz) {
  core::ChannelSpec spec;
  spec.name = name;
  spec.dtype = dtype;
  spec.rate_hz = rate_hz;
  spec.units = "counts";
  spec.samples_per_block = frame.frames_per_block * frame.frame_elements;
  spec.ring_blocks = 256;
  spec.frame = std::move(frame);
  REQUIRE(core::create_channel(arena, spec));
}

}  // namespace

TEST_SUITE("kafka.kinds") {

TEST_CASE("spectra and histograms go as hs01, events as ev44: every message is its block's, exact counts" *
          doctest::timeout(90)) {
  const std::string topic = "weir.kinds";
  kafka::MockCluster cluster = make_cluster(topic);
  ArenaGuard near_name(unique_name("kkinds"));
  core::Arena near = make_arena(near_name.where());
  const std::vector<std::string> sim_args{"sim", near_name.where(), "adc0", "--rate", "1e5", "--block", "1000",
                                          "--fast", "--signal", "sine", "--frequency", "5000", "--amplitude", "2"};
  auto sim_first = sim_args;
  sim_first.insert(sim_first.end(), {"--blocks", "1"});
  REQUIRE(run_weir(sim_first).exit_code == kExitOk);  // makes adc0
  const std::vector<std::string> pulses_args{"sim", near_name.where(), "det", "--rate", "1e6", "--block", "1000",
                                             "--fast", "--signal", "pulses", "--count-rate", "5000", "--seed", "5"};
  auto pulses_first = pulses_args;
  pulses_first.insert(pulses_first.end(), {"--blocks", "1"});
  REQUIRE(run_weir(pulses_first).exit_code == kExitOk);  // makes det
  BackgroundWeir shard({"shard", near_name.where(), "fft", "-i", "adc0", "--policy", "lossless", "-p", "size=256",
                        "-p", "overlap=0", "-p", "spectrum=psd", "-p", "plan=estimate", "-p", "wisdom=off"});
  BackgroundWeir mca({"shard", near_name.where(), "mca", "-i", "det", "--policy", "lossless"});
  REQUIRE_MESSAGE(eventually([&] { return core::find_channel(near, "adc0.psd").has_value(); }, kSettle), shard.output());
  REQUIRE_MESSAGE(eventually([&] { return core::find_channel(near, "det.pulses").has_value(); }, kSettle), mca.output());
  make_framed(near, "det0.events", core::Dtype::f64, core::event_frame(kMaxEvents), kEventRate);
  core::FrameShape hist;
  hist.frames_per_block = kFrames;
  hist.frame_elements = kBins;
  hist.axis = {"energy", "keV", 0.0, 1.0, "mca0.hist_axis"};
  std::vector<double> centres(kBins);
  for (std::uint32_t i = 0; i < kBins; ++i) centres[i] = std::pow(i + 1.0, 1.5);  // irregular: from the key
  core::KvStore kv(near);
  REQUIRE(kv.set_array("mca0.hist_axis", core::ArrayShape{core::Dtype::f64, 1, {kBins, 0}},
                       std::as_bytes(std::span(centres))) == core::KvStatus::ok);
  make_framed(near, "mca0.hist", core::Dtype::u32, hist, 1e4);

  BackgroundWeir send({"kafka", "send", near_name.where(), "--brokers", cluster.bootstraps(), "--topic", topic,
                       "--name", "out", "--channel", "adc0.psd", "--channel", "det0.events", "--channel", "mca0.hist",
                       "--channel", "det.pulses"});
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.out.channels") == 4; }, kSettle), send.output());
  auto sim_more = sim_args;
  sim_more.insert(sim_more.end(), {"--blocks", "12"});  // ~50 spectra: all still in the shard's 64-block ring
  const RunResult sim = run_weir(sim_more);
  REQUIRE_MESSAGE(sim.exit_code == kExitOk, sim.err);
  auto pulses_more = pulses_args;
  pulses_more.insert(pulses_more.end(), {"--blocks", "40"});
  const RunResult pulses_sim = run_weir(pulses_more);
  REQUIRE_MESSAGE(pulses_sim.exit_code == kExitOk, pulses_sim.err);
  auto events = core::ChannelWriter::open(near, "det0.events");
  auto histograms = core::ChannelWriter::open(near, "mca0.hist");
  REQUIRE(events);
  REQUIRE(histograms);
  publish_events(*events, 30);
  events->skip(4, core::GapReason::source_loss);  // rides on block 34's message
  publish_events(*events, 20);
  publish_histograms(*histograms, 12);

  // Each shard has read every block of its input (lossless): its outputs are all out.
  const auto shard_done = [&](const std::string& input) {
    for (const core::ChannelInfo& c : core::list_channels(near))
      if (c.name == input)
        for (const core::ConsumerInfo& r : c.consumers)
          if (r.alive && r.kind.starts_with("shard")) return r.cursor == c.blocks_written;
    return false;
  };
  REQUIRE_MESSAGE(eventually([&] { return shard_done("adc0"); }, kSettle), shard.output());
  REQUIRE_MESSAGE(eventually([&] { return shard_done("det"); }, kSettle), mca.output());
  const std::uint64_t spectra = head_of(near, "adc0.psd");
  std::uint64_t psd_ring = 0;
  for (const core::ChannelInfo& c : core::list_channels(near))
    if (c.name == "adc0.psd") psd_ring = c.ring_blocks;
  const std::uint64_t pulse_blocks = head_of(near, "det.pulses");
  REQUIRE(spectra > 30);
  REQUIRE(spectra <= psd_ring);
  REQUIRE(pulse_blocks >= 40);  // a block of events for every input block the shard read
  std::uint64_t hist_messages = 0, dropped_events = 0;
  for (std::uint64_t s = 0; s < 12; ++s) hist_messages += hist_frames(s);
  for (std::uint64_t s = 0; s < 54; ++s)
    if ((s < 30 || s >= 34) && s % 10 == 3 && s % (kMaxEvents + 1) != 0) ++dropped_events;
  const std::uint64_t expected = spectra + 50 + hist_messages + pulse_blocks;
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.out.delivered") == expected; }, kSettle),
                  send.output() << " delivered " << key_u64(near, "kafka.out.delivered") << " of " << expected);
  CHECK(key_u64(near, "kafka.out.sent") == expected);
  CHECK(key_u64(near, "kafka.out.gaps") == 4);
  CHECK(key_u64(near, "kafka.out.events_dropped") == dropped_events);
  send.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
  CHECK(key_u64(near, "kafka.out.carriers") == 0);  // the gap run rode on block 34

  const std::vector<RawMessage> messages = read_topic(cluster.bootstraps(), topic, expected, kSettle);
  REQUIRE(messages.size() == expected);
  std::vector<core::ChannelInfo> infos = core::list_channels(near);
  const auto info_of = [&](const std::string& name) {
    for (const auto& c : infos)
      if (c.name == name) return c;
    FAIL("no channel " << name);
    return core::ChannelInfo{};
  };
  const core::ChannelInfo psd = info_of("adc0.psd");
  REQUIRE(psd.frame.frames_per_block == 1);
  REQUIRE(psd.frame.frame_elements == 129);
  auto psd_blocks = core::BlockCopier::open(near, "adc0.psd");
  auto event_blocks = core::BlockCopier::open(near, "det0.events");
  auto hist_blocks = core::BlockCopier::open(near, "mca0.hist");
  auto pulse_copier = core::BlockCopier::open(near, "det.pulses");
  REQUIRE(pulse_copier);
  REQUIRE(psd_blocks);
  REQUIRE(event_blocks);
  REQUIRE(hist_blocks);
  std::vector<std::byte> block(std::max({psd_blocks->block_bytes(), event_blocks->block_bytes(),
                                        hist_blocks->block_bytes(), pulse_copier->block_bytes()}));
  std::set<std::uint64_t> spectra_seen, event_ids, pulse_ids;
  std::uint64_t pulses = 0;
  std::set<std::pair<std::uint64_t, std::uint32_t>> frames_seen;
  std::uint64_t wrong = 0, headers_with_gaps = 0, dropped_headers = 0;
  for (const RawMessage& m : messages) {
    CAPTURE(m.key);
    CAPTURE(m.offset);
    core::BlockRecord rec;
    if (m.key == "adc0.psd" || m.key == "mca0.hist") {
      const auto h = kafka::decode_hs01(m.value);
      REQUIRE_MESSAGE(h, h.error().what);
      const Seq seq = parse_seq(m.header("weir.seq").value_or(""));
      const bool is_psd = m.key == "adc0.psd";
      REQUIRE((is_psd ? psd_blocks : hist_blocks)->copy(seq.sequence, block, rec) == core::BlockStatus::ok);
      CHECK(h->source == m.key);
      if (is_psd) {
        CHECK(seq.frame == 0);
        CHECK(seq.frames == 1);
        CHECK(spectra_seen.insert(seq.sequence).second);
        CHECK(h->label == "frequency");
        CHECK(h->unit == "Hz");
        CHECK(h->dtype == core::Dtype::f32);
        REQUIRE(h->bins == 129);
        const double step = psd.frame.axis.step;  // fs / N
        CHECK(step == doctest::Approx(1e5 / 256));
        for (std::uint32_t i = 0; i <= 129; ++i) wrong += h->boundaries[i] == (i - 0.5) * step ? 0 : 1;
        wrong += std::memcmp(h->data.data(), block.data(), 129 * sizeof(float)) == 0 ? 0 : 1;
        CHECK(h->timestamp_ns == static_cast<std::int64_t>(rec.realtime_ns));
      } else {
        CHECK(seq.frames == hist_frames(seq.sequence));
        CHECK(frames_seen.insert({seq.sequence, seq.frame}).second);
        CHECK(h->label == "energy");
        CHECK(h->unit == "keV");
        CHECK(h->info == "counts");
        CHECK(h->dtype == core::Dtype::i64);  // u32 goes as long
        REQUIRE(h->bins == kBins);
        std::vector<double> edges;
        kafka::bin_boundaries(kBins, 0.0, 1.0, centres, edges);
        CHECK(std::equal(h->boundaries.begin(), h->boundaries.end(), edges.begin(), edges.end()));
        CHECK(edges[1] == (centres[0] + centres[1]) / 2);
        for (std::uint32_t i = 0; i < kBins; ++i) {
          std::int64_t got = 0;
          std::uint32_t want = 0;
          std::memcpy(&got, h->data.data() + i * sizeof got, sizeof got);
          std::memcpy(&want, block.data() + (std::size_t{seq.frame} * kBins + i) * sizeof want, sizeof want);
          wrong += got == want ? 0 : 1;
        }
        // Frame f's time: its block's stamp + f frames of 16 elements at 1e4 elements/s.
        CHECK(h->timestamp_ns == static_cast<std::int64_t>(rec.realtime_ns) + seq.frame * 1'600'000);
      }
      headers_with_gaps += m.header("weir.gaps") ? 1 : 0;
    } else if (m.key == "det0.events") {
      const auto e = kafka::decode_ev44(m.value);
      REQUIRE_MESSAGE(e, e.error().what);
      const auto s = static_cast<std::uint64_t>(e->message_id);
      CHECK(event_ids.insert(s).second);
      REQUIRE(event_blocks->copy(s, block, rec) == core::BlockStatus::ok);
      CHECK(e->source == "det0.events");
      CHECK(rec.samples / core::kEventFields == s % (kMaxEvents + 1));
      wrong += check_events(*e, block, rec);
      if (const auto d = m.header("weir.events_dropped")) {
        CHECK(*d == "1");
        ++dropped_headers;
      }
      if (const auto g = m.header("weir.gaps")) {
        CHECK(s == 34);
        CHECK(*g == "30:4:source_loss");
        ++headers_with_gaps;
      }
    } else if (m.key == "det.pulses") {
      const auto e = kafka::decode_ev44(m.value);
      REQUIRE_MESSAGE(e, e.error().what);
      const auto s = static_cast<std::uint64_t>(e->message_id);
      CHECK(pulse_ids.insert(s).second);
      REQUIRE(pulse_copier->copy(s, block, rec) == core::BlockStatus::ok);
      CHECK(e->time_of_flight.size() == rec.samples / core::kEventFields);  // no pulse offset beyond int32
      pulses += e->time_of_flight.size();
      wrong += check_events(*e, block, rec);
      CHECK_FALSE(m.header("weir.gaps"));
    } else {
      FAIL("a message of another key: " << m.key);
    }
  }
  CHECK(wrong == 0);
  CHECK(spectra_seen.size() == spectra);
  CHECK(*spectra_seen.rbegin() == spectra - 1);
  CHECK(frames_seen.size() == hist_messages);
  CHECK(event_ids.size() == 50);
  CHECK(*event_ids.begin() == 0);
  CHECK(*event_ids.rbegin() == 53);
  CHECK(event_ids.count(31) == 0);
  CHECK(pulse_ids.size() == pulse_blocks);
  CHECK(*pulse_ids.rbegin() == pulse_blocks - 1);
  CHECK(pulses > 50);  // 5000 pulses/s for 41 ms of signal, less pile-up
  CHECK(headers_with_gaps == 1);
  CHECK(dropped_headers == dropped_events);
  MESSAGE(messages.size() << " messages: " << spectra << " spectra (hs01), " << hist_messages << " histogram frames (hs01), "
          << event_ids.size() << " event blocks (ev44, " << dropped_events << " events dropped), " << pulse_ids.size()
          << " MCA pulse blocks (ev44, " << pulses << " pulses)");
  shard.signal(SIGTERM);
  mca.signal(SIGTERM);
  CHECK(shard.wait_exit(kSettle) == kExitOk);
  CHECK(mca.wait_exit(kSettle) == kExitOk);
}

TEST_CASE("a run of gap blocks after a channel's last message goes in a gap carrier, at stop or after a while" *
          doctest::timeout(60)) {
  const std::string at_stop = "weir.carrier.stop", alone = "weir.carrier.idle";
  kafka::MockCluster cluster = make_cluster(at_stop);
  REQUIRE(cluster.create_topic(alone, 1, 3));
  ArenaGuard near_name(unique_name("kcarrier"));
  core::Arena near = make_arena(near_name.where());
  make_channel(near, "adc0", 64, 64, 1e4);                                              // se00
  make_framed(near, "det1.events", core::Dtype::f64, core::event_frame(kMaxEvents), kEventRate);  // ev44
  core::FrameShape one;
  one.frames_per_block = 1;
  one.frame_elements = 8;
  one.axis = {"frequency", "Hz", 0.0, 10.0, ""};
  make_framed(near, "spec0", core::Dtype::f32, one, 80);                                // hs01
  make_channel(near, "adc1", 64, 64, 1e4);
  BackgroundWeir send({"kafka", "send", near_name.where(), "--brokers", cluster.bootstraps(), "--topic", at_stop,
                       "--name", "out", "--channel", "adc0", "--channel", "det1.events", "--channel", "spec0",
                       "--gap-carrier-ms", "60000"});
  BackgroundWeir idle({"kafka", "send", near_name.where(), "--brokers", cluster.bootstraps(), "--topic", alone,
                       "--name", "idle", "--channel", "adc1", "--gap-carrier-ms", "200"});
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.out.channels") == 3; }, kSettle), send.output());
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.idle.channels") == 1; }, kSettle), idle.output());
  for (const char* name : {"adc0", "det1.events", "spec0", "adc1"}) {
    auto w = core::ChannelWriter::open(near, name);
    REQUIRE(w);
    for (int b = 0; b < 5; ++b) {
      std::span<std::byte> slot;
      REQUIRE(w->claim(slot) == core::ClaimStatus::ok);
      std::memset(slot.data(), 0, slot.size());
      w->publish(std::string_view(name) == "det1.events" ? 0 : w->samples_per_block(), kStamp0, 1);
    }
    w->skip(3, core::GapReason::source_loss);  // blocks 5, 6, 7: nothing after them
  }
  // Alone for 200 ms: the idle sender's carrier goes before any stop; the next block has no header.
  REQUIRE_MESSAGE(eventually([&] { return key_u64(near, "kafka.idle.carriers") == 1; }, kSettle), idle.output());
  {
    auto w = core::ChannelWriter::open(near, "adc1");
    REQUIRE(w);
    for (int b = 0; b < 2; ++b) {
      std::span<std::byte> slot;
      REQUIRE(w->claim(slot) == core::ClaimStatus::ok);
      w->publish(w->samples_per_block(), kStamp0, 1);
    }
  }
  REQUIRE(eventually([&] { return key_u64(near, "kafka.idle.delivered") == 7; }, kSettle));
  REQUIRE(eventually([&] { return key_u64(near, "kafka.out.gaps") == 9 && key_u64(near, "kafka.out.delivered") == 15; },
                     kSettle));
  CHECK(key_u64(near, "kafka.out.carriers") == 0);  // 60 s: none before the stop
  send.signal(SIGTERM);
  idle.signal(SIGTERM);
  CHECK(send.wait_exit(kSettle) == kExitOk);
  CHECK(idle.wait_exit(kSettle) == kExitOk);
  CHECK(key_u64(near, "kafka.out.carriers") == 3);
  CHECK(key_u64(near, "kafka.idle.carriers") == 1);

  // At stop: 5 messages a channel, then one carrier each: no values, counter 7, weir.gaps 5:3 (covers 7 too).
  const std::vector<RawMessage> stopped = read_topic(cluster.bootstraps(), at_stop, 18, kSettle);
  REQUIRE(stopped.size() == 18);
  std::map<std::string, std::uint64_t> data, carriers;
  for (const RawMessage& m : stopped) {
    CAPTURE(m.key);
    const auto gaps = m.header("weir.gaps");
    if (!gaps) {
      ++data[m.key];
      continue;
    }
    CHECK(*gaps == "5:3:source_loss");
    ++carriers[m.key];
    if (m.key == "adc0") {
      const auto c = kafka::decode_se00(m.value);
      REQUIRE(c);
      CHECK(c->counter == 7);
      CHECK(c->samples == 0);
    } else if (m.key == "det1.events") {
      const auto c = kafka::decode_ev44(m.value);
      REQUIRE(c);
      CHECK(c->message_id == 7);
      CHECK(c->reference_time.empty());
      CHECK(c->time_of_flight.empty());
    } else {
      REQUIRE(m.key == "spec0");
      const auto c = kafka::decode_hs01(m.value);
      REQUIRE(c);
      CHECK(c->bins == 0);
      CHECK(m.header("weir.seq") == std::optional<std::string>("7:0:0"));
    }
  }
  CHECK(data == std::map<std::string, std::uint64_t>{{"adc0", 5}, {"det1.events", 5}, {"spec0", 5}});
  CHECK(carriers == std::map<std::string, std::uint64_t>{{"adc0", 1}, {"det1.events", 1}, {"spec0", 1}});

  // Alone: blocks 0-4, the carrier (counter 7), blocks 8 and 9 without a header; nothing at stop.
  const std::vector<RawMessage> idled = read_topic(cluster.bootstraps(), alone, 8, kSettle);
  REQUIRE(idled.size() == 8);
  std::vector<std::int64_t> counters;
  std::uint64_t with_gaps = 0;
  for (const RawMessage& m : idled) {
    const auto b = kafka::decode_se00(m.value);
    REQUIRE(b);
    counters.push_back(b->counter);
    if (const auto g = m.header("weir.gaps")) {
      CHECK(*g == "5:3:source_loss");
      CHECK(b->samples == 0);
      ++with_gaps;
    }
  }
  CHECK(counters == std::vector<std::int64_t>{0, 1, 2, 3, 4, 7, 8, 9});
  CHECK(with_gaps == 1);
}

}  // TEST_SUITE

}  // namespace weir::test
