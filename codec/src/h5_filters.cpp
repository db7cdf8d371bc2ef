// HDF5 filter classes for LZ4 (32004), bitshuffle with LZ4 (32008) and zstd (32015) that encode and
// decode through this module, registered once per process.
#include <cstring>
#include <mutex>

#include "formats.hpp"

namespace weir::codec {

namespace {

// Reports `why` on HDF5's error stack, under the pipeline's major error.
void push_error(const char* filter, const std::string& why) {
  H5Epush2(H5E_DEFAULT, __FILE__, filter, __LINE__, H5E_ERR_CLS, H5E_PLINE, H5E_CALLBACK, "%s", why.c_str());
}

// The codec a filter's client data describe, or an error naming what does not fit.
core::Result<std::pair<Codec, std::size_t>> codec_of(H5Z_filter_t id, std::size_t cd_count, const unsigned cd[],
                                                     std::size_t element_bytes_default) {
  switch (id) {
    case detail::kFilterLz4: return std::pair{Codec{Method::lz4, false, 0}, element_bytes_default};
    case detail::kFilterZstd: {
      const int level = cd_count > 0 && cd[0] > 0 ? static_cast<int>(cd[0]) : detail::kZstdDefaultLevel;
      return std::pair{Codec{Method::zstd, false, level}, element_bytes_default};
    }
    case detail::kFilterBitshuffle:
      if (cd_count < 3) return core::fail(core::Errc::invalid_argument, "bitshuffle: no element size in the filter's values");
      if (cd_count < 5 || cd[4] != detail::kBitshuffleLz4)
        return core::fail(core::Errc::invalid_argument, "bitshuffle: only bitshuffle with LZ4 (compression 2) is supported");
      return std::pair{Codec{Method::bitshuffle_lz4, false, 0}, static_cast<std::size_t>(cd[2])};
    default: break;
  }
  return core::fail(core::Errc::invalid_argument, "filter " + std::to_string(id) + " is not one of this module's");
}

// Replaces *buf with `bytes` from HDF5's allocator; returns the new buffer or null.
std::byte* replace_buffer(void** buf, std::size_t* buf_size, std::size_t bytes) {
  void* fresh = H5allocate_memory(std::max<std::size_t>(bytes, 1), false);
  if (fresh == nullptr) return nullptr;
  H5free_memory(*buf);
  *buf = fresh;
  *buf_size = std::max<std::size_t>(bytes, 1);
  return static_cast<std::byte*>(fresh);
}

size_t run_filter(H5Z_filter_t id, const char* label, unsigned flags, size_t cd_count, const unsigned cd[], size_t nbytes,
                  size_t* buf_size, void** buf) {
  auto codec = codec_of(id, cd_count, cd, 1);
  if (!codec) {
    push_error(label, codec.error().what);
    return 0;
  }
  const auto [c, element_bytes] = *codec;
  const std::span<const std::byte> in(static_cast<const std::byte*>(*buf), nbytes);
  if ((flags & H5Z_FLAG_REVERSE) != 0) {
    auto bytes = detail::stored_chunk_bytes(c.method, in);
    if (!bytes) {
      push_error(label, bytes.error().what);
      return 0;
    }
    std::vector<std::byte> out(*bytes);
    if (auto ok = detail::decode_stage(c.method, element_bytes, in, out); !ok) {
      push_error(label, ok.error().what);
      return 0;
    }
    std::byte* dest = replace_buffer(buf, buf_size, out.size());
    if (dest == nullptr) {
      push_error(label, "out of memory");
      return 0;
    }
    if (!out.empty()) std::memcpy(dest, out.data(), out.size());
    return out.size();
  }
  Encoder encoder(c, element_bytes);
  auto encoded = encoder.encode(in);
  if (!encoded) {
    push_error(label, encoded.error().what);
    return 0;
  }
  const std::size_t n = encoded->size();
  std::vector<std::byte> copy(encoded->begin(), encoded->end());  // *buf is the encoder's input: copy before freeing it
  std::byte* dest = replace_buffer(buf, buf_size, n);
  if (dest == nullptr) {
    push_error(label, "out of memory");
    return 0;
  }
  std::memcpy(dest, copy.data(), n);
  return n;
}

size_t lz4_filter(unsigned flags, size_t cd_count, const unsigned cd[], size_t nbytes, size_t* buf_size, void** buf) {
  return run_filter(detail::kFilterLz4, "lz4 filter (32004)", flags, cd_count, cd, nbytes, buf_size, buf);
}
size_t bitshuffle_filter(unsigned flags, size_t cd_count, const unsigned cd[], size_t nbytes, size_t* buf_size, void** buf) {
  return run_filter(detail::kFilterBitshuffle, "bitshuffle filter (32008)", flags, cd_count, cd, nbytes, buf_size, buf);
}
size_t zstd_filter(unsigned flags, size_t cd_count, const unsigned cd[], size_t nbytes, size_t* buf_size, void** buf) {
  return run_filter(detail::kFilterZstd, "zstd filter (32015)", flags, cd_count, cd, nbytes, buf_size, buf);
}

struct FilterClass {
  H5Z_filter_t id;
  const char* name;
  H5Z_func_t function;
};
constexpr FilterClass kClasses[] = {
    {detail::kFilterLz4, "lz4 (weir codec)", lz4_filter},
    {detail::kFilterBitshuffle, "bitshuffle+lz4 (weir codec)", bitshuffle_filter},
    {detail::kFilterZstd, "zstd (weir codec)", zstd_filter},
};

core::Result<void> register_all() {
  for (const FilterClass& c : kClasses) {
    H5Z_class2_t filter_class{};
    filter_class.version = H5Z_CLASS_T_VERS;
    filter_class.id = c.id;
    filter_class.encoder_present = 1;
    filter_class.decoder_present = 1;
    filter_class.name = c.name;
    filter_class.can_apply = nullptr;
    filter_class.set_local = nullptr;
    filter_class.filter = c.function;
    if (H5Zregister(&filter_class) < 0)
      return core::fail(core::Errc::invalid_argument, "H5Zregister " + std::to_string(c.id) + " (" + c.name + ") failed");
  }
  return {};
}

}  // namespace

core::Result<void> register_hdf5_filters() {
  static std::once_flag once;
  static core::Result<void> registered;
  std::call_once(once, [] { registered = register_all(); });
  return registered;
}

}  // namespace weir::codec
