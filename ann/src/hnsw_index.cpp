// HnswIndex: hnswlib's HierarchicalNSW with a space whose distances are weir's kernels.
// hnswlib is included here only: hnswlib.h defines functions that a second translation unit would
// define again. NO_MANUAL_VECTORIZATION turns off hnswlib's SSE code: its AVX distances (distances
// come from core's kernels, picked at run time) and its prefetches in the graph walks, which read the
// neighbour id one past the end of a link list (upstream nmslib/hnswlib#107 and #578: a heap read
// past the allocation, reported by ASan in every insert).
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#define NO_MANUAL_VECTORIZATION
#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <new>

#include "weir/ann/hnsw_index.hpp"
#include "weir/core/vector_kernels.hpp"

namespace weir::ann {

namespace {

// Chance that replacing a node also relinks each of its neighbours (hnswlib's updatePoint): 1.0
// relinks all of them (~30x the cost of an insert at m 16); a ring of overwritten pulses needs
// replacement near the cost of an insert, and the replaced node itself is always relinked.
constexpr float kUpdateNeighbourProbability = 0.1F;
constexpr std::size_t kRandomSeed = 100;  // hnswlib's level generator: fixed, so builds repeat

struct SpaceParams {
  core::VectorKernel kernel = nullptr;
  std::uint32_t dim = 0;
};

// cosine (normalised copies) and dot: 1 - dot, smaller is nearer, as hnswlib's inner-product space.
float inner_distance(const void* a, const void* b, const void* param) {
  const auto* p = static_cast<const SpaceParams*>(param);
  return 1.0F - p->kernel(static_cast<const float*>(a), static_cast<const float*>(b), p->dim);
}

float l2_distance(const void* a, const void* b, const void* param) {
  const auto* p = static_cast<const SpaceParams*>(param);
  return p->kernel(static_cast<const float*>(a), static_cast<const float*>(b), p->dim);
}

class KernelSpace final : public hnswlib::SpaceInterface<float> {
 public:
  KernelSpace(std::uint32_t dim, core::Metric metric, const core::VectorKernels& kernels) noexcept
      : metric_(metric) {
    params_.dim = dim;
    params_.kernel = metric == core::Metric::l2 ? kernels.l2sq : kernels.dot;
  }
  size_t get_data_size() override { return std::size_t{params_.dim} * sizeof(float); }
  hnswlib::DISTFUNC<float> get_dist_func() override {
    return metric_ == core::Metric::l2 ? &l2_distance : &inner_distance;
  }
  void* get_dist_func_param() override { return &params_; }

 private:
  SpaceParams params_;
  core::Metric metric_;
};

}  // namespace

struct HnswIndex::Impl {
  Impl(std::uint32_t d, const IndexParams& p, const core::VectorKernels& k) : dim(d), params(p), kernels(k), space(d, p.metric, k) {}
  std::uint32_t dim;
  IndexParams params;
  core::VectorKernels kernels;
  KernelSpace space;  // before hnsw: it must outlive it
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> hnsw;
  std::atomic<std::uint64_t> live{0};
};

HnswIndex::HnswIndex(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
HnswIndex::HnswIndex(HnswIndex&&) noexcept = default;
HnswIndex& HnswIndex::operator=(HnswIndex&&) noexcept = default;
HnswIndex::~HnswIndex() = default;

core::Result<HnswIndex> HnswIndex::create(std::uint32_t dim, std::uint32_t capacity, const IndexParams& params) {
  if (dim == 0 || capacity == 0)
    return core::fail(core::Errc::invalid_argument, "ann index: dim and capacity must be positive");
  if (params.m < 2 || params.m > 256 || params.ef_construction == 0)
    return core::fail(core::Errc::invalid_argument, "ann index: m must be 2..256 and ef_construction positive");
  core::VectorKernels kernels;
  if (!core::vector_kernels(params.kernel, kernels))
    return core::fail(core::Errc::invalid_argument,
                      std::string("ann index: this CPU cannot run the ") + core::kernel_name(params.kernel) + " kernel");
  try {
    auto impl = std::make_unique<Impl>(dim, params, kernels);
    impl->hnsw = std::make_unique<hnswlib::HierarchicalNSW<float>>(&impl->space, capacity, params.m,
                                                                   params.ef_construction, kRandomSeed);
    return HnswIndex(std::move(impl));
  } catch (const std::exception& e) {
    return core::fail(core::Errc::invalid_argument, std::string("ann index of ") + std::to_string(capacity) +
                                                        " x " + std::to_string(dim) + ": " + e.what());
  }
}

void HnswIndex::prepare(std::span<const float> in, std::span<float> out) const noexcept {
  const std::uint32_t n = impl_->dim;
  if (impl_->params.metric != core::Metric::cosine) {
    std::copy_n(in.data(), n, out.data());
    return;
  }
  const float sq = impl_->kernels.dot(in.data(), in.data(), n);
  const float scale = sq > 0.0F && std::isfinite(sq) ? 1.0F / std::sqrt(sq) : 0.0F;
  for (std::uint32_t i = 0; i < n; ++i) out[i] = in[i] * scale;
}

bool HnswIndex::add(std::uint32_t slot, std::span<const float> prepared) noexcept {
  auto& h = *impl_->hnsw;
  try {
    std::unique_lock<std::mutex> lookup(h.cur_element_count_guard_);
    const auto it = h.label_lookup_.find(slot);
    if (it == h.label_lookup_.end()) {
      lookup.unlock();
      (void)h.addPoint(prepared.data(), slot, -1);
      impl_->live.fetch_add(1, std::memory_order_relaxed);  // a counter: orders nothing
      return true;
    }
    const hnswlib::tableint id = it->second;
    lookup.unlock();
    std::unique_lock<std::mutex> update(
        h.link_list_update_locks_[id & (hnswlib::HierarchicalNSW<float>::max_update_element_locks - 1)]);
    if (h.isMarkedDeleted(id)) {
      h.unmarkDeletedInternal(id);
      impl_->live.fetch_add(1, std::memory_order_relaxed);
    }
    h.updatePoint(prepared.data(), id, kUpdateNeighbourProbability);
    return true;
  } catch (...) {  // bad_alloc, or hnswlib's runtime_error at capacity
    return false;
  }
}

bool HnswIndex::remove(std::uint32_t slot) noexcept {
  auto& h = *impl_->hnsw;
  try {
    std::lock_guard<std::mutex> lookup(h.cur_element_count_guard_);
    const auto it = h.label_lookup_.find(slot);
    if (it == h.label_lookup_.end() || h.isMarkedDeleted(it->second)) return false;
    h.markDeletedInternal(it->second);
    impl_->live.fetch_sub(1, std::memory_order_relaxed);
    return true;
  } catch (...) {
    return false;
  }
}

std::int64_t HnswIndex::search(std::span<const float> prepared, std::uint32_t ef, std::span<Neighbour> out) noexcept {
  // hnswlib's searchKnn, but reading the entry point and top level under hnswlib's `global` mutex:
  // an insert that raises the top level holds it throughout and sets both, so the pair read here is
  // never the old entry point with the new level (whose links the old node does not have).
  auto& h = *impl_->hnsw;
  if (out.empty()) return 0;
  try {
    hnswlib::tableint node = 0;
    int top_level = -1;
    {
      std::lock_guard<std::mutex> global(h.global);
      node = h.enterpoint_node_;
      top_level = h.maxlevel_;
    }
    if (top_level < 0) return 0;  // empty
    const void* q = prepared.data();
    float best = h.fstdistfunc_(q, h.getDataByInternalId(node), h.dist_func_param_);
    for (int level = top_level; level > 0; --level) {
      for (bool changed = true; changed;) {
        changed = false;
        const hnswlib::linklistsizeint* links = h.get_linklist(node, level);
        const int size = h.getListCount(const_cast<hnswlib::linklistsizeint*>(links));
        const auto* ids = reinterpret_cast<const hnswlib::tableint*>(links + 1);
        for (int i = 0; i < size; ++i) {
          const hnswlib::tableint candidate = ids[i];
          if (candidate >= h.max_elements_) return -1;
          const float d = h.fstdistfunc_(q, h.getDataByInternalId(candidate), h.dist_func_param_);
          if (d < best) {
            best = d;
            node = candidate;
            changed = true;
          }
        }
      }
    }
    const std::size_t breadth = std::max<std::size_t>(ef, out.size());
    auto found = h.num_deleted_ != 0 ? h.searchBaseLayerST<true>(node, q, breadth)
                                     : h.searchBaseLayerST<false>(node, q, breadth);  // farthest on top
    while (found.size() > out.size()) found.pop();
    const auto n = static_cast<std::int64_t>(found.size());
    const core::Metric metric = impl_->params.metric;
    for (std::int64_t i = n - 1; i >= 0; --i) {
      const auto [distance, id] = found.top();
      found.pop();
      float score = 0.0F;
      switch (metric) {
        case core::Metric::cosine: score = std::clamp(1.0F - distance, -1.0F, 1.0F); break;
        case core::Metric::dot: score = 1.0F - distance; break;
        case core::Metric::l2: score = std::sqrt(std::max(distance, 0.0F)); break;
      }
      out[static_cast<std::size_t>(i)] = Neighbour{static_cast<std::uint32_t>(h.getExternalLabel(id)), score};
    }
    return n;
  } catch (...) {
    return -1;
  }
}

std::uint64_t HnswIndex::live() const noexcept { return impl_->live.load(std::memory_order_relaxed); }
std::uint32_t HnswIndex::dim() const noexcept { return impl_->dim; }
core::Kernel HnswIndex::kernel() const noexcept { return impl_->kernels.kernel; }

}  // namespace weir::ann
