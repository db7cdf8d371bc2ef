// Output channels and keys of one shard instance: created or opened on the cold path, written
// through the host callbacks on the hot path.
#include "outputs.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "weir/core/clock.hpp"
#include "weir/core/signals.hpp"
#include "weir/shard_host/host_limits.hpp"
#include "weir/shard_host/output_shape.hpp"
#include "weir/shard_host/watchdog.hpp"

namespace weir::shard_host {

namespace {

using core::Errc;
using core::fail;


// A fixed ABI text field as a string; empty optional when it is not zero-terminated.
template <std::size_t N>
std::optional<std::string> field(const char (&text)[N]) {
  const void* end = std::memchr(text, '\0', N);
  if (end == nullptr) return std::nullopt;
  return std::string(text, static_cast<const char*>(end));
}

std::vector<std::string> split_labels(const std::string& text) {
  std::vector<std::string> labels;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string label = text.substr(start, comma - start);
    const auto first = label.find_first_not_of(' ');
    const auto last = label.find_last_not_of(' ');
    if (first != std::string::npos) labels.push_back(label.substr(first, last - first + 1));
    start = comma + 1;
  }
  return labels;
}

// The bytes of a WEIR_KEY_ARRAY output's declared shape, or why it is malformed.
core::Result<std::uint64_t> array_bytes(const weir_shard_output& o) {
  if (o.array_dtype < WEIR_DTYPE_I8 || o.array_dtype > WEIR_DTYPE_C64)
    return fail(Errc::invalid_argument, "unknown array element dtype " + std::to_string(o.array_dtype));
  if (o.array_rank != 1 && o.array_rank != 2)
    return fail(Errc::invalid_argument, "an array has rank 1 or 2, not " + std::to_string(o.array_rank));
  if (o.array_dims[0] == 0 || (o.array_rank == 2 && o.array_dims[1] == 0) || (o.array_rank == 1 && o.array_dims[1] != 0))
    return fail(Errc::invalid_argument, "array dimensions " + std::to_string(o.array_dims[0]) + " x " + std::to_string(o.array_dims[1]) +
                                            " do not fit rank " + std::to_string(o.array_rank));
  std::uint64_t elements = o.array_dims[0];
  if (o.array_rank == 2) elements *= o.array_dims[1];
  return elements * core::dtype_bytes(static_cast<core::Dtype>(o.array_dtype));
}

bool is_word_type(core::ValueType t) noexcept {
  return t == core::ValueType::i64 || t == core::ValueType::u64 || t == core::ValueType::f64;
}

// Runs write() again while another writer holds the key, up to kKeyWriteWaitNs after the first busy
// answer; returns the last status. Hot path: no allocation, a clock read only once busy.
template <class Write>
core::KvStatus retry_busy(Write&& write) noexcept {
  std::int64_t deadline = 0;
  for (;;) {
    const core::KvStatus st = write();
    if (st != core::KvStatus::busy) return st;
    const std::int64_t now = core::monotonic_ns();
    if (deadline == 0) deadline = now + kKeyWriteWaitNs;
    if (now >= deadline) return st;  // held by another writer past a short bounded wait
  }
}

}  // namespace

OutputSet::OutputSet(const core::Arena& arena, std::string what) : kv_(arena), vectors_(arena), what_(std::move(what)) {
  host_.self = this;
  host_.claim = &OutputSet::claim;
  host_.publish = &OutputSet::publish;
  host_.set_key = &OutputSet::set_key;
  host_.log = &OutputSet::log;
  host_.put_vector = &OutputSet::put_vector;
}

core::Result<std::unique_ptr<OutputSet>> OutputSet::open(const core::Arena& arena, const weir_shard_config& cfg,
                                                         const std::string& what) {
  if (cfg.output_count > WEIR_SHARD_MAX_OUTPUTS)
    return fail(Errc::invalid_argument, what + ": configure declared " + std::to_string(cfg.output_count) +
                                            " outputs; at most " + std::to_string(WEIR_SHARD_MAX_OUTPUTS));
  std::unique_ptr<OutputSet> set(new OutputSet(arena, what));
  set->outputs_.reserve(cfg.output_count);
  for (std::uint32_t i = 0; i < cfg.output_count; ++i) {
    const weir_shard_output& o = cfg.outputs[i];
    const auto name = field(o.name);
    if (!name || name->empty())
      return fail(Errc::invalid_argument, what + ": output " + std::to_string(i) + " has no name, or one of " +
                                              std::to_string(WEIR_SHARD_NAME_BYTES) + " bytes or more without a terminating zero");
    Output& out = set->outputs_.emplace_back();
    out.name = *name;
    out.kind = o.kind;
    core::Result<void> opened;
    if (o.kind == WEIR_OUTPUT_CHANNEL) {
      opened = set->open_channel(arena, o, out);
    } else if (o.kind == WEIR_OUTPUT_KEY) {
      opened = set->open_key(arena, o, out);
    } else if (o.kind == WEIR_OUTPUT_VECTORS && cfg.abi_version >= 3) {
      opened = set->open_vectors(arena, o, out);
    } else {
      opened = fail(Errc::invalid_argument, "unknown output kind " + std::to_string(o.kind));
    }
    if (!opened) return tl::make_unexpected(core::with_context(opened.error(), what + ": output '" + *name + "'"));
  }
  return set;
}

core::Result<void> OutputSet::open_channel(const core::Arena& arena, const weir_shard_output& o, Output& out) {
  if (o.dtype < WEIR_DTYPE_I8 || o.dtype > WEIR_DTYPE_C64) return fail(Errc::invalid_argument, "unknown dtype " + std::to_string(o.dtype));
  if (!std::isfinite(o.rate_hz) || o.rate_hz <= 0)
    return fail(Errc::invalid_argument, "rate must be a positive number of Hz, not " + std::to_string(o.rate_hz));
  if (o.samples_per_block == 0 || o.samples_per_block > core::kMaxSamplesPerBlock)
    return fail(Errc::invalid_argument, "samples per block must be 1 to " + std::to_string(core::kMaxSamplesPerBlock) + ", not " +
                                            std::to_string(o.samples_per_block));
  const auto units = field(o.units);
  const auto labels = field(o.labels);
  if (!units || !labels) return fail(Errc::invalid_argument, "units or labels lack a terminating zero");
  if (o.frame_elements != 0) {
    if (o.samples_per_block % o.frame_elements != 0)
      return fail(Errc::invalid_argument, std::to_string(o.samples_per_block) + " samples per block are not a whole number of " +
                                              std::to_string(o.frame_elements) + "-element frames");
    if (!field(o.axis.name) || !field(o.axis.units))
      return fail(Errc::invalid_argument, "the frame axis name or units lack a terminating zero");
    if (!std::isfinite(o.axis.start) || !std::isfinite(o.axis.step))
      return fail(Errc::invalid_argument, "the frame axis start and step must be finite");
  }
  const auto dtype = static_cast<core::Dtype>(o.dtype);
  if (auto index = core::find_channel(arena, out.name); !index) {
    core::ChannelSpec spec;
    spec.name = out.name;
    spec.dtype = dtype;
    spec.rate_hz = o.rate_hz;
    spec.units = *units;
    spec.labels = split_labels(*labels);
    spec.samples_per_block = o.samples_per_block;
    spec.frame = frame_shape(o);
    spec.ring_blocks = kDefaultOutputRingBlocks;
    auto created = core::create_channel(arena, spec);
    if (!created && !core::find_channel(arena, out.name)) return tl::make_unexpected(created.error());
  }
  for (const core::ChannelInfo& c : core::list_channels(arena)) {
    if (c.name != out.name) continue;
    if (c.dtype != dtype || c.samples_per_block != o.samples_per_block)
      return fail(Errc::invalid_argument, "the channel exists with " + std::string(core::dtype_name(c.dtype)) + " x " +
                                              std::to_string(c.samples_per_block) + " per block, but the shard declares " +
                                              core::dtype_name(dtype) + " x " + std::to_string(o.samples_per_block));
    if (c.frame.frame_elements != o.frame_elements)
      return fail(Errc::invalid_argument, "the channel exists with frames of " + std::to_string(c.frame.frame_elements) +
                                              " elements, but the shard declares " + std::to_string(o.frame_elements));
  }
  auto writer = core::ChannelWriter::open(arena, out.name);
  if (!writer) return tl::make_unexpected(writer.error());
  out.writer.emplace(std::move(*writer));
  return {};
}

core::Result<void> OutputSet::open_key(const core::Arena& arena, const weir_shard_output& o, Output& out) {
  (void)arena;
  if ((o.key_type < WEIR_KEY_BYTES || o.key_type > WEIR_KEY_F64) && o.key_type != WEIR_KEY_ARRAY)
    return fail(Errc::invalid_argument, "unknown key type " + std::to_string(o.key_type));
  out.max_bytes = o.max_bytes;
  if (o.key_type == WEIR_KEY_ARRAY) {
    auto bytes = array_bytes(o);
    if (!bytes) return tl::make_unexpected(bytes.error());
    if (o.max_bytes != 0 && o.max_bytes != *bytes)
      return fail(Errc::invalid_argument, "the array's shape takes " + std::to_string(*bytes) + " bytes, but max_bytes is " +
                                              std::to_string(o.max_bytes));
    out.max_bytes = *bytes;
    out.array_bytes = *bytes;
    out.array = array_shape(o);
    out.key_type = core::ValueType::array;
  } else {
    out.key_type = static_cast<core::ValueType>(o.key_type);  // the same numbers, by the ABI's word
  }
  if (is_word_type(out.key_type)) {
    if (out.max_bytes == 0) out.max_bytes = sizeof(std::uint64_t);
    if (out.max_bytes != sizeof(std::uint64_t))
      return fail(Errc::invalid_argument, "an integer or f64 key holds 8 bytes, not " + std::to_string(o.max_bytes));
  }
  if (out.max_bytes > kv_.value_bytes())
    return fail(Errc::invalid_argument, "the key may hold up to " + std::to_string(out.max_bytes) +
                                            " bytes, but the arena's value slots hold " + std::to_string(kv_.value_bytes()) +
                                            " (create the arena with a larger --value-bytes)");
  const core::KvStatus st = kv_.resolve(out.name, out.key, true);
  if (st != core::KvStatus::ok)
    return fail(Errc::invalid_argument, std::string("cannot create the key: ") + core::kv_status_text(st) +
                                            (st == core::KvStatus::key_too_long
                                                 ? " (the arena's keys hold " + std::to_string(kv_.key_bytes()) + " bytes)"
                                                 : std::string{}));
  // A key output's units become the text key <name>_units, which the recorder stores as its log's units.
  const auto units = field(o.units);
  if (!units) return fail(Errc::invalid_argument, "units lack a terminating zero");
  if (!units->empty()) {
    const std::string units_key = out.name + "_units";
    if (const core::KvStatus set = kv_.set_text(units_key, *units); set != core::KvStatus::ok)
      return fail(Errc::invalid_argument, "cannot write the units key '" + units_key + "': " + core::kv_status_text(set));
  }
  return {};
}

core::Result<void> OutputSet::open_vectors(const core::Arena& arena, const weir_shard_output& o, Output& out) {
  const auto labels = field(o.labels);
  if (!labels) return fail(Errc::invalid_argument, "labels lack a terminating zero");
  const std::vector<std::string> part = split_labels(*labels);
  if (part.size() != 1)
    return fail(Errc::invalid_argument, "a vector ring names one partition label, not '" + *labels + "'");
  if (o.array_dtype != WEIR_DTYPE_F32 || o.array_rank != 1 || o.array_dims[0] == 0 || o.array_dims[1] != 0)
    return fail(Errc::invalid_argument, "a vector ring's vectors are f32 of rank 1 with non-zero dims (array_dtype " +
                                            std::to_string(o.array_dtype) + ", rank " + std::to_string(o.array_rank) + ", dims " +
                                            std::to_string(o.array_dims[0]) + " x " + std::to_string(o.array_dims[1]) + ")");
  if (o.capacity == 0) return fail(Errc::invalid_argument, "a vector ring holds at least one key (capacity is 0)");
  if (vectors_.dim() == 0)
    return fail(Errc::invalid_argument, "partition '" + part[0] + "': the arena " + arena.location().describe() +
                                            " holds no vectors (create it with a vector dim of " +
                                            std::to_string(o.array_dims[0]) + ")");
  if (vectors_.dim() != o.array_dims[0])
    return fail(Errc::invalid_argument, "partition '" + part[0] + "': the shard writes vectors of " +
                                            std::to_string(o.array_dims[0]) + " dims, but the arena's vectors have " +
                                            std::to_string(vectors_.dim()) + " dims");
  constexpr std::uint64_t kMetaBytes = sizeof(weir_vector_meta);
  if (kMetaBytes > kv_.value_bytes())
    return fail(Errc::invalid_argument, "a vector's metadata takes " + std::to_string(kMetaBytes) +
                                            " bytes, but the arena's value slots hold " + std::to_string(kv_.value_bytes()));
  out.array = core::ArrayShape{core::Dtype::i64, 1, {WEIR_VECTOR_META_WORDS, 0}};
  out.ring.resize(o.capacity);
  std::vector<std::string> created;  // keys this call made: removed again if the ring does not fit
  const auto refuse = [&](std::uint32_t i, const std::string& why) {
    for (const std::string& key : created) (void)kv_.del(key);
    return fail(Errc::invalid_argument, "key " + std::to_string(i) + " of the ring's " + std::to_string(o.capacity) + ": " + why +
                                            " (a ring needs a slot per key: create the arena with more --slots, or "
                                            "give a smaller capacity)");
  };
  for (std::uint32_t i = 0; i < o.capacity; ++i) {
    const std::string key = out.name + "/" + std::to_string(i);
    if (kv_.resolve(key, out.ring[i], false) == core::KvStatus::not_found) created.push_back(key);
    if (auto labelled = core::set_labels(arena, key, part); !labelled) return refuse(i, labelled.error().what);
    const core::KvStatus st = kv_.resolve(key, out.ring[i], true);
    if (st != core::KvStatus::ok) return refuse(i, "'" + key + "': " + core::kv_status_text(st));
  }
  return {};
}

std::vector<std::string> OutputSet::names() const {
  std::vector<std::string> names;
  for (const Output& o : outputs_) names.push_back(o.name);
  return names;
}

// ---- the host callbacks (hot path) ----

void* OutputSet::claim(void* self, std::uint32_t output, std::uint32_t* capacity) {
  auto* set = static_cast<OutputSet*>(self);
  if (output >= set->outputs_.size() || !set->outputs_[output].writer) {
    ++set->errors_;  // a shard bug: claiming a key or an undeclared output
    return nullptr;
  }
  Output& out = set->outputs_[output];
  std::span<std::byte> block;
  if (out.writer->claim(block) != core::ClaimStatus::ok) {
    out.claimed = false;
    return nullptr;  // dropped at the source: the arena counts it in the channel
  }
  out.claimed = true;
  if (capacity != nullptr) *capacity = out.writer->samples_per_block();
  return block.data();
}

void OutputSet::publish(void* self, std::uint32_t output, std::uint32_t samples, std::uint64_t realtime_ns,
                        std::uint32_t flags) {
  auto* set = static_cast<OutputSet*>(self);
  if (output >= set->outputs_.size() || !set->outputs_[output].claimed) {
    ++set->errors_;  // publish without a successful claim
    return;
  }
  Output& out = set->outputs_[output];
  if (samples > out.writer->samples_per_block()) {
    ++set->errors_;  // more than it could have written: publish what the block holds
    samples = out.writer->samples_per_block();
  }
  out.writer->publish(samples, realtime_ns, 0, flags);
  out.claimed = false;
  ++set->written_;
}

int OutputSet::set_key(void* self, std::uint32_t output, const void* value, size_t bytes) {
  auto* set = static_cast<OutputSet*>(self);
  if (output >= set->outputs_.size() || set->outputs_[output].kind != WEIR_OUTPUT_KEY ||
      bytes > set->outputs_[output].max_bytes ||
      (set->outputs_[output].array_bytes != 0 && bytes != set->outputs_[output].array_bytes)) {
    ++set->errors_;
    return -1;
  }
  Output& out = set->outputs_[output];
  const std::span<const std::byte> span(static_cast<const std::byte*>(value), bytes);
  const auto write = [set, &out, span]() noexcept {
    return out.array_bytes != 0 ? set->kv_.set_array(out.key, out.array, span)
                                : set->kv_.set(out.key, span, out.key_type);
  };
  const core::KvStatus st = retry_busy([&]() noexcept {
    core::KvStatus first = write();
    if (first == core::KvStatus::stale_handle || first == core::KvStatus::not_found) {
      // Someone deleted the key: make it again (hashing, no allocation) and write once more.
      first = set->kv_.resolve(out.name, out.key, true);
      if (first == core::KvStatus::ok) first = write();
    }
    return first;
  });
  if (st == core::KvStatus::ok) {
    ++set->written_;
    return 0;
  }
  ++set->errors_;
  return -1;
}

int OutputSet::put_vector(void* self, std::uint32_t output, const float* vector, const weir_vector_meta* meta) {
  auto* set = static_cast<OutputSet*>(self);
  if (output >= set->outputs_.size() || set->outputs_[output].kind != WEIR_OUTPUT_VECTORS || vector == nullptr ||
      meta == nullptr) {
    ++set->errors_;
    return -1;
  }
  Output& out = set->outputs_[output];
  const core::KeyHandle key = out.ring[out.puts % out.ring.size()];
  ++out.puts;
  // The metadata first: a follower woken by the vector's write finds the metadata that goes with it.
  const std::uint64_t words[WEIR_VECTOR_META_WORDS] = {meta->realtime_ns, meta->sequence, meta->frame,
                                                       meta->first_sample};
  const std::span<const std::byte> value(reinterpret_cast<const std::byte*>(words), sizeof words);
  const core::KvStatus st = retry_busy([&]() noexcept { return set->kv_.set_array(key, out.array, value); });
  if (st != core::KvStatus::ok ||
      set->vectors_.set(key, std::span<const float>(vector, set->vectors_.dim()), kKeyWriteWaitNs) !=
          core::VectorStatus::ok) {
    ++set->errors_;  // held past the wait, deleted meanwhile (stale handle), or not finite
    return -1;
  }
  ++set->vectors_written_;
  return 0;
}

void OutputSet::log(void* self, int level, const char* message) {
  const auto* set = static_cast<const OutputSet*>(self);
  const char* tag = level >= 2 ? "error" : level == 1 ? "warning" : "info";
  std::fprintf(stderr, "weir: %s: %s: %s\n", set->what_.c_str(), tag, message != nullptr ? message : "");
}

}  // namespace weir::shard_host
