#include "sample_ops.hpp"

#include <cstdint>
#include <type_traits>

#include <lua.hpp>

#include "weir/shard.h"

namespace weir::dsp::lua {
namespace {

template <class T>
const T* as(const void* samples) noexcept {
  return static_cast<const T*>(samples);
}

template <class T>
void push(lua_State* L, const void* samples, std::uint32_t i) {
  if constexpr (std::is_floating_point_v<T>) {
    lua_pushnumber(L, static_cast<lua_Number>(as<T>(samples)[i]));
  } else {
    lua_pushinteger(L, static_cast<lua_Integer>(as<T>(samples)[i]));
  }
}

template <class T>
double sum(const void* samples, std::uint32_t count) {
  const T* x = as<T>(samples);
  double total = 0.0;
  for (std::uint32_t i = 0; i < count; ++i) total += static_cast<double>(x[i]);
  return total;
}

template <class T, class Better>
std::uint32_t arg_best(const void* samples, std::uint32_t count, Better better) {
  const T* x = as<T>(samples);
  std::uint32_t best = 0;
  for (std::uint32_t i = 1; i < count; ++i) {
    const bool best_is_nan = x[best] != x[best];  // constant false for integer T
    if (best_is_nan || better(x[i], x[best])) best = i;
  }
  return best;
}

template <class T>
std::uint32_t argmax(const void* samples, std::uint32_t count) {
  return arg_best<T>(samples, count, [](T a, T b) { return a > b; });
}

template <class T>
std::uint32_t argmin(const void* samples, std::uint32_t count) {
  return arg_best<T>(samples, count, [](T a, T b) { return a < b; });
}

template <class T>
void to_f32(const void* samples, std::uint32_t count, float* out) {
  const T* x = as<T>(samples);
  for (std::uint32_t i = 0; i < count; ++i) out[i] = static_cast<float>(x[i]);
}

template <class T>
constexpr SampleOps ops_for(const char* name) {
  return SampleOps{name, &push<T>, &sum<T>, &argmax<T>, &argmin<T>, &to_f32<T>};
}

constexpr SampleOps kOps[] = {
    ops_for<std::int8_t>("i8"),   ops_for<std::uint8_t>("u8"),   ops_for<std::int16_t>("i16"),
    ops_for<std::uint16_t>("u16"), ops_for<std::int32_t>("i32"), ops_for<std::uint32_t>("u32"),
    ops_for<std::int64_t>("i64"), ops_for<float>("f32"),         ops_for<double>("f64"),
};
static_assert(WEIR_DTYPE_F64 - WEIR_DTYPE_I8 + 1 == sizeof kOps / sizeof kOps[0],
              "one entry per real dtype, in weir_dtype order");

}  // namespace

const SampleOps* sample_ops(std::uint32_t dtype) noexcept {
  if (dtype < WEIR_DTYPE_I8 || dtype > WEIR_DTYPE_F64) return nullptr;
  return &kOps[dtype - WEIR_DTYPE_I8];
}

}  // namespace weir::dsp::lua
