// One shard instance: configure and register (cold), then next -> process -> validate -> done per
// block (hot), then stop and report.
#include "weir/shard_host/shard_instance.hpp"

#include <cmath>
#include <cstring>

#include "outputs.hpp"
#include "weir/core/clock.hpp"
#include "weir/core/vector_store.hpp"
#include "weir/shard_host/host_limits.hpp"

namespace weir::shard_host {

namespace {

using core::Errc;
using core::fail;

// The ABI's flag words are the arena's: a partial block is published as is, and the after-gap bit
// is the one a data block never carries.
static_assert(WEIR_SHARD_PARTIAL == core::kBlockPartialFlag);
static_assert(WEIR_SHARD_AFTER_GAP == core::kBlockGapFlag);

constexpr double kP50 = 0.50;
constexpr double kP99 = 0.99;

}  // namespace

ShardInstance::ShardInstance(const weir_shard_api& api, std::string what, InstanceReport info)
    : api_(&api), what_(std::move(what)), report_(std::move(info)) {}

core::Result<std::unique_ptr<ShardInstance>> ShardInstance::create(const core::Arena& arena, const LoadedShard& shard,
                                                                   const ResolvedParams& params,
                                                                   const InstanceSpec& spec) {
  const weir_shard_api& api = shard.api();
  const std::string what = shard.what() + " (instance '" + spec.instance + "')";
  core::ChannelInfo input;
  bool found = false;
  for (core::ChannelInfo& c : core::list_channels(arena))
    if (c.name == spec.input) {
      input = std::move(c);
      found = true;
    }
  if (!found)
    return fail(Errc::not_found, what + ": no channel '" + spec.input + "' in " + arena.location().describe());
  const auto dtype = static_cast<std::uint32_t>(input.dtype);
  if ((api.input_dtypes & (1U << dtype)) == 0)
    return fail(Errc::invalid_argument, what + ": input channel '" + spec.input + "' carries " +
                                            core::dtype_name(input.dtype) + " samples, which the shard does not "
                                            "accept (it accepts " + dtype_list(api.input_dtypes) + ")");

  InstanceReport info;
  info.instance = spec.instance;
  info.kind = api.name;
  info.input = spec.input;
  info.policy = spec.policy;
  std::unique_ptr<ShardInstance> self(new ShardInstance(api, what, std::move(info)));

  const std::string base = spec.output_base.empty() ? spec.input : spec.output_base;
  auto cfg = std::make_unique<weir_shard_config>();  // ~6 KiB: not for the stack of a deep caller
  std::memset(cfg.get(), 0, sizeof(weir_shard_config));
  // A version 2 shard gets the config it knows: its version and size, without version 3's fields.
  cfg->abi_version = api.abi_version;
  cfg->struct_size = api.abi_version >= 3 ? sizeof(weir_shard_config) : WEIR_SHARD_CONFIG_V2_SIZE;
  cfg->input_frame_elements = input.frame.frame_elements;
  cfg->arena_vector_dim = core::VectorStore(arena).dim();
  cfg->instance = spec.instance.c_str();
  cfg->input_channel = spec.input.c_str();
  cfg->input_dtype = dtype;
  cfg->input_samples_per_block = input.samples_per_block;
  cfg->input_rate_hz = input.rate_hz;
  cfg->input_units = input.units.c_str();
  cfg->output_base = base.c_str();
  cfg->param_count = params.size();
  cfg->param_names = params.name_array();
  cfg->param_values = params.value_array();
  char error[WEIR_SHARD_ERROR_BYTES] = {};
  self->shard_ = api.configure(cfg.get(), error, sizeof error);
  if (self->shard_ == nullptr) {
    error[sizeof error - 1] = '\0';
    return fail(Errc::invalid_argument, what + ": configure refused on channel '" + spec.input + "': " +
                                            (error[0] != '\0' ? error : "no reason given"));
  }
  auto outputs = OutputSet::open(arena, *cfg, what);
  if (!outputs) return tl::make_unexpected(outputs.error());  // the destructor stops the shard
  self->outputs_ = std::move(*outputs);
  self->report_.outputs = self->outputs_->names();

  auto reader = core::ChannelReader::open(arena, spec.input, spec.policy, spec.instance, spec.start,
                                            spec.start_sequence);
  if (!reader) return tl::make_unexpected(core::with_context(reader.error(), what));
  self->reader_.emplace(std::move(*reader));
  self->reader_->set_kind("shard:" + self->report_.kind);
  self->expected_seq_ = self->reader_->cursor();
  self->stats_ns_ = core::monotonic_ns();
  if (input.rate_hz > 0)
    self->block_period_ns_ = std::llround(static_cast<double>(input.samples_per_block) * 1e9 / input.rate_hz);
  self->ring_blocks_ = input.ring_blocks;
  self->v3_ = api.abi_version >= 3;
  return self;
}

ShardInstance::~ShardInstance() {
  if (shard_ != nullptr) api_->stop(shard_);
}

std::uint32_t ShardInstance::poll(std::uint32_t max_blocks, Watchdog& dog, std::uint32_t who) noexcept {
  const weir_shard_host* host = outputs_->host();
  std::uint32_t handled = 0;
  std::int64_t now = 0;
  while (handled < max_blocks) {
    core::BlockView view;
    std::uint64_t lost = 0;
    const core::NextStatus st = reader_->next(view, lost);
    if (st == core::NextStatus::empty) break;
    ++handled;
    if (st == core::NextStatus::lost) {  // lapped, or a gap the writer published: counted, moved on
      expected_seq_ = reader_->cursor();
      after_gap_ = true;
      continue;
    }
    if (view.sequence > expected_seq_) {  // `latest` jumped ahead
      skipped_ += view.sequence - expected_seq_;
      after_gap_ = true;
    }
    // The shard learns of missing input on the next block it gets (never on the very first one).
    const std::uint32_t gap_flag = after_gap_ && processed_any_ ? WEIR_SHARD_AFTER_GAP : 0U;
    // Version 3: the previous block was torn, so what the shard kept of it is to be dropped.
    const std::uint32_t host_flags = v3_ ? WEIR_SHARD_AFTER_GAP | WEIR_SHARD_PREV_TORN : WEIR_SHARD_AFTER_GAP;
    const std::uint32_t torn_flag = v3_ && prev_torn_ ? WEIR_SHARD_PREV_TORN : 0U;
    const weir_shard_block in{view.data,        view.samples,      (view.flags & ~host_flags) | gap_flag | torn_flag,
                              view.sequence,    view.realtime_ns,  view.monotonic_ns,
                              view.first_sample};
    const std::int64_t start = core::monotonic_ns();
    dog.arm(who, view.sequence, start);
    const int rc = api_->process(shard_, &in, host);
    now = core::monotonic_ns();
    dog.disarm();
    const bool valid = reader_->done(view);  // re-validates the seqlock; a torn block counts as lost
    after_gap_ = !valid;  // the writer lapped us mid-block: what follows does not continue it
    prev_torn_ = !valid;
    processed_any_ = true;
    idle_called_ = false;
    const std::uint64_t written = outputs_->take_written();
    if (valid) out_ += written;  // outputs made from a torn block are not counted as good output
    out_ += outputs_->take_vectors();  // vectors: of blocks the shard knows intact (WEIR_SHARD_PREV_TORN)
    errors_ += outputs_->take_errors() + (rc < 0 ? 1U : 0U);
    if (rc > 0) ++skipped_;  // the shard chose not to use this block
    expected_seq_ = view.sequence + 1;
    const auto took = static_cast<std::uint64_t>(now - start);
    recent_.add(took);
    total_.add(took);
    store_counters();
    if (++since_stats_ >= kStatsEveryBlocks || now - stats_ns_ >= kStatsEveryNs) publish_stats(now);
  }
  if (handled < max_blocks && processed_any_ && !idle_called_) {  // drained: a batching shard runs what it holds
    run_idle();
    store_counters();
  }
  if (handled < max_blocks && since_stats_ > 0) publish_stats(now != 0 ? now : core::monotonic_ns());  // drained
  return handled;
}

void ShardInstance::run_idle() noexcept {
  if (const auto idle = shard_idle(*api_); idle != nullptr) {
    const int rc = idle(shard_, outputs_->host(), prev_torn_ ? WEIR_SHARD_PREV_TORN : 0U);
    out_ += outputs_->take_written() + outputs_->take_vectors();
    errors_ += outputs_->take_errors() + (rc < 0 ? 1U : 0U);
  }
  prev_torn_ = false;  // told (or no shard to tell): the next block carries no stale verdict
  idle_called_ = true;
}

void ShardInstance::store_counters() noexcept {
  core::ConsumerRow& row = reader_->counters();
  // Relaxed: single writer (this thread); readers (`weir ls`) only print the numbers.
  row.blocks_out.store(out_, std::memory_order_relaxed);
  row.blocks_skipped.store(skipped_, std::memory_order_relaxed);
  row.errors.store(errors_, std::memory_order_relaxed);
}

void ShardInstance::publish_stats(std::int64_t now_ns) noexcept {
  core::ConsumerRow& row = reader_->counters();
  row.proc_p50_ns.store(recent_.percentile(kP50), std::memory_order_relaxed);  // a figure for people only
  row.proc_p99_ns.store(recent_.percentile(kP99), std::memory_order_relaxed);
  if (recent_.count() >= kStatsWindowBlocks) recent_.clear();
  since_stats_ = 0;
  stats_ns_ = now_ns;
}

InstanceReport ShardInstance::finish() {
  if (finished_) return report_;
  finished_ = true;
  if (shard_ != nullptr && outputs_) {
    // What a batching shard holds since the last block, and the partial results the shard still
    // holds, published while the outputs are open.
    if (processed_any_ && !idle_called_) run_idle();
    if (const auto flush = shard_flush(*api_); flush != nullptr) {
      const int rc = flush(shard_, outputs_->host());
      out_ += outputs_->take_written() + outputs_->take_vectors();
      errors_ += outputs_->take_errors() + (rc < 0 ? 1U : 0U);
    }
  }
  if (shard_ != nullptr) api_->stop(shard_);  // frees what configure made; outputs stay published
  shard_ = nullptr;
  if (reader_) {
    store_counters();
    const core::ConsumerRow& row = reader_->row();
    report_.blocks_in = row.blocks_read.load(std::memory_order_relaxed);
    report_.blocks_lost = row.blocks_lost.load(std::memory_order_relaxed);
  }
  report_.blocks_out = out_;
  report_.blocks_skipped = skipped_;
  report_.errors = errors_;
  report_.p50_ns = total_.percentile(kP50);
  report_.p99_ns = total_.percentile(kP99);
  reader_.reset();   // leaves the consumer table
  outputs_.reset();  // gives up every output channel's writer claim
  return report_;
}

}  // namespace weir::shard_host
