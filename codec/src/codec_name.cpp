// Codec names, their checks and the HDF5 filter pipeline each codec's chunks are read back with.
#include <charconv>

#include "formats.hpp"

namespace weir::codec {

namespace {

constexpr std::string_view kChoices =
    "none, lz4, shuffle+lz4, deflate[:1..9], shuffle+deflate[:1..9], zstd[:1..22], shuffle+zstd[:1..22], "
    "bitshuffle+lz4";
constexpr int kDeflateMax = 9;
constexpr int kZstdMax = 22;
constexpr int kDefaultLevel = 1;  // "deflate" and "zstd" without a level: their fastest usual level
constexpr std::string_view kShufflePrefix = "shuffle+";

core::Result<Codec> refuse(std::string_view text, std::string_view why) {
  return core::fail(core::Errc::invalid_argument,
                    "codec '" + std::string(text) + "': " + std::string(why) + " (choices: " + std::string(kChoices) + ")");
}

}  // namespace

core::Result<Codec> parse(std::string_view text) {
  Codec codec;
  std::string_view rest = text;
  if (rest.starts_with(kShufflePrefix)) {
    codec.shuffle = true;
    rest.remove_prefix(kShufflePrefix.size());
  }
  std::string_view method = rest;
  std::string_view level;
  if (const auto colon = rest.find(':'); colon != std::string_view::npos) {
    method = rest.substr(0, colon);
    level = rest.substr(colon + 1);
  }
  if (method == "none") codec.method = Method::none;
  else if (method == "lz4") codec.method = Method::lz4;
  else if (method == "deflate") codec.method = Method::deflate;
  else if (method == "zstd") codec.method = Method::zstd;
  else if (method == "bitshuffle+lz4" && !codec.shuffle) codec.method = Method::bitshuffle_lz4;
  else return refuse(text, "unknown codec");
  const bool leveled = codec.method == Method::deflate || codec.method == Method::zstd;
  if (!level.empty() || rest.find(':') != std::string_view::npos) {
    if (!leveled) return refuse(text, "this codec takes no level");
    int value = 0;
    const auto [end, ec] = std::from_chars(level.data(), level.data() + level.size(), value);
    if (ec != std::errc{} || end != level.data() + level.size()) return refuse(text, "the level is not a number");
    codec.level = value;
  } else if (leveled) {
    codec.level = kDefaultLevel;
  }
  if (auto ok = detail::validate(codec, 1); !ok) return refuse(text, ok.error().what);
  return codec;
}

std::string name(const Codec& codec) {
  std::string text = codec.shuffle ? std::string(kShufflePrefix) : std::string();
  switch (codec.method) {
    case Method::none: text += "none"; break;
    case Method::lz4: text += "lz4"; break;
    case Method::deflate: text += "deflate:" + std::to_string(codec.level); break;
    case Method::zstd: text += "zstd:" + std::to_string(codec.level); break;
    case Method::bitshuffle_lz4: text += "bitshuffle+lz4"; break;
  }
  return text;
}

namespace detail {

core::Result<void> validate(const Codec& codec, std::size_t element_bytes) {
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4 && element_bytes != 8)
    return core::fail(core::Errc::invalid_argument,
                      "element bytes " + std::to_string(element_bytes) + " (must be 1, 2, 4 or 8)");
  const bool shuffle_allowed = codec.method == Method::deflate || codec.method == Method::lz4 || codec.method == Method::zstd;
  if (codec.shuffle && !shuffle_allowed) return core::fail(core::Errc::invalid_argument, "shuffle only goes before deflate, lz4 or zstd");
  switch (codec.method) {
    case Method::deflate:
      if (codec.level < 1 || codec.level > kDeflateMax)
        return core::fail(core::Errc::invalid_argument, "deflate level " + std::to_string(codec.level) + " (1..9)");
      break;
    case Method::zstd:
      if (codec.level < 1 || codec.level > kZstdMax)
        return core::fail(core::Errc::invalid_argument, "zstd level " + std::to_string(codec.level) + " (1..22)");
      break;
    case Method::none:
    case Method::lz4:
    case Method::bitshuffle_lz4:
      if (codec.level != 0) return core::fail(core::Errc::invalid_argument, "level " + std::to_string(codec.level) + " (this codec takes none)");
      break;
  }
  return {};
}

}  // namespace detail

std::vector<FilterStep> filters(const Codec& codec, std::size_t element_bytes) {
  std::vector<FilterStep> steps;
  const auto es = static_cast<unsigned>(element_bytes);
  if (codec.shuffle) steps.push_back({H5Z_FILTER_SHUFFLE, H5Z_FLAG_MANDATORY, {es}, 1});
  switch (codec.method) {
    case Method::none: break;
    case Method::deflate:
      steps.push_back({H5Z_FILTER_DEFLATE, H5Z_FLAG_MANDATORY, {static_cast<unsigned>(codec.level)}, 1});
      break;
    case Method::lz4: steps.push_back({detail::kFilterLz4, H5Z_FLAG_MANDATORY, {}, 0}); break;  // the plugin's default block
    case Method::zstd:
      steps.push_back({detail::kFilterZstd, H5Z_FLAG_MANDATORY, {static_cast<unsigned>(codec.level)}, 1});
      break;
    case Method::bitshuffle_lz4:
      steps.push_back({detail::kFilterBitshuffle,
                       H5Z_FLAG_MANDATORY,
                       {detail::kBitshuffleMajor, detail::kBitshuffleMinor, es,
                        static_cast<unsigned>(detail::bitshuffle_block_elements(element_bytes)), detail::kBitshuffleLz4},
                       5});
      break;
  }
  return steps;
}

core::Result<void> set_filters(hid_t dcpl, const Codec& codec, std::size_t element_bytes, const std::string& what) {
  const std::string context = "filters of " + what + " (" + name(codec) + ")";
  if (auto ok = detail::validate(codec, element_bytes); !ok) return tl::make_unexpected(core::with_context(ok.error(), context));
  if (auto ok = register_hdf5_filters(); !ok) return tl::make_unexpected(core::with_context(ok.error(), context));
  for (const FilterStep& step : filters(codec, element_bytes)) {
    if (H5Pset_filter(dcpl, step.id, step.flags, step.cd_count, step.cd.data()) < 0)
      return core::fail(core::Errc::invalid_argument, context + ": H5Pset_filter " + std::to_string(step.id) + " failed");
  }
  return {};
}

}  // namespace weir::codec
