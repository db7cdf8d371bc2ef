#pragma once
// Reads the key names and values of a snapshot's /keys table back with the HDF5 C library, for
// checks too many to hand to the Python checker one file at a time.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <cstddef>
#include <string>
#include <vector>

#include "weir/h5/handle.hpp"
#include "weir/h5/types.hpp"

namespace weir::test {

struct KeyValue {
  std::string key;
  std::vector<std::byte> value;  // empty for busy and torn rows
  std::uint32_t owner_pid = 0;   // the writer holding a busy row, else 0
};

inline std::vector<KeyValue> read_key_values(const std::string& path) {
  struct Row {  // the fields wanted; HDF5 picks them out of the table by name
    char* key;
    hvl_t value;
    std::uint32_t owner_pid;
  };
  h5::File file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  REQUIRE(file);
  h5::Dataset table(H5Dopen2(file.get(), "keys", H5P_DEFAULT));
  REQUIRE(table);
  const h5::Type text = h5::text_type();
  const h5::Type bytes = h5::bytes_type();
  h5::Type type(H5Tcreate(H5T_COMPOUND, sizeof(Row)));
  H5Tinsert(type.get(), "key", HOFFSET(Row, key), text.get());
  H5Tinsert(type.get(), "value", HOFFSET(Row, value), bytes.get());
  H5Tinsert(type.get(), "owner_pid", HOFFSET(Row, owner_pid), H5T_NATIVE_UINT32);
  h5::Space space(H5Dget_space(table.get()));
  const auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get()));
  std::vector<Row> rows(n);
  if (n > 0) REQUIRE(H5Dread(table.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()) >= 0);
  std::vector<KeyValue> out;
  for (const Row& r : rows) {
    const auto* p = static_cast<const std::byte*>(r.value.p);
    out.push_back(KeyValue{r.key != nullptr ? r.key : "", std::vector<std::byte>(p, p + r.value.len), r.owner_pid});
  }
  if (n > 0) H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, rows.data());
  return out;
}

}  // namespace weir::test
