#pragma once
// Reading a built-in shard's parameters in configure: by name from the host's config, the declared
// default where the host passed none (configure is also called directly, by tests and embedding
// programs, with only some parameters), parsed and checked against the shard's own table whatever
// the host did. What a refusal says is the family's wording (ParamWording), so each family keeps
// the messages its users and tests know.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "weir/core/error.hpp"
#include "weir/shard.h"

namespace weir::dsp {

/// One parameter value the reader refused, for a ParamWording to put into words.
struct ParamProblem {
  enum class Kind : std::uint8_t {
    required,      // not given and no default (or a name the table does not declare)
    not_integer,   // INT that does not parse
    not_number,    // REAL that does not parse, or is not finite
    not_boolean,   // BOOL that is none of true/false/yes/no/on/off/1/0
    not_choice,    // TEXT not among the declared choices
    out_of_range,  // a number outside the declared [min, max]
  };
  Kind kind;
  std::string_view name;
  std::string_view value;                 // as given; empty for `required`
  const weir_shard_param* param;          // the declaration; nullptr for an undeclared name
};

/// Turns a problem into the message configure returns (the shard adapter adds "<kind>: ").
using ParamWording = std::string (*)(const ParamProblem& problem);

/// The parameters of one configure call. Thread: the configuring thread; the table and cfg must
/// outlive the reader.
class ParamReader {
 public:
  ParamReader(std::span<const weir_shard_param> table, const weir_shard_config& cfg, ParamWording wording) noexcept
      : table_(table), cfg_(cfg), wording_(wording) {}

  /// Fails naming the first given parameter the table does not declare, and the known ones.
  [[nodiscard]] core::Result<void> check_names() const;
  /// An INT in the declared range.
  [[nodiscard]] core::Result<std::int64_t> integer(std::string_view name) const;
  /// A finite REAL in the declared range.
  [[nodiscard]] core::Result<double> real(std::string_view name) const;
  /// A BOOL.
  [[nodiscard]] core::Result<bool> boolean(std::string_view name) const;
  /// A TEXT; one of the declared choices when there are any. Views the host's or the table's text.
  [[nodiscard]] core::Result<std::string_view> text(std::string_view name) const;

  /// The declaration of `name`, or nullptr.
  [[nodiscard]] const weir_shard_param* declared(std::string_view name) const noexcept;

 private:
  [[nodiscard]] const char* value_of(const weir_shard_param& param) const noexcept;
  [[nodiscard]] core::Result<std::string_view> raw(std::string_view name) const;
  // A number parsed by `parse` (a std::optional<T> of the text) and checked against [min, max].
  template <class T, class Parse>
  [[nodiscard]] core::Result<T> number(std::string_view name, Parse parse, ParamProblem::Kind unparsable) const;
  [[nodiscard]] tl::unexpected<core::Error> refuse(ParamProblem::Kind kind, std::string_view name,
                                                    std::string_view value) const;

  std::span<const weir_shard_param> table_;
  const weir_shard_config& cfg_;
  ParamWording wording_;
};

}  // namespace weir::dsp
