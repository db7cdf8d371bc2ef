// Clearing a dead SWMR writer's marks, as h5clear -s does.
#include "weir/h5/repair.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "weir/h5/check.hpp"
#include "weir/h5/dataset.hpp"
#include "weir/h5/handle.hpp"

namespace weir::h5 {

namespace {

constexpr const char* kClearFlagsProperty = "clear_status_flags";  // HDF5's own name; h5clear -s sets it

}  // namespace

core::Result<bool> swmr_marked(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return core::fail(core::Errc::not_found, path + ": " + std::strerror(errno));
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    (void)last_error();
    return core::fail(core::Errc::invalid_argument, path + ": not an HDF5 file");
  }
  bool marked = false;
  const File file = open_read_only(path, marked);
  if (!file.valid()) return tl::make_unexpected(error("H5Fopen", path));
  return marked;
}

core::Result<void> clear_swmr_marks(const std::string& path) {
  auto fapl = check<PropList>(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate", path);
  if (!fapl) return tl::make_unexpected(fapl.error());
  hbool_t clear = 1;
  if (H5Pexist(fapl->get(), kClearFlagsProperty) <= 0 || H5Pset(fapl->get(), kClearFlagsProperty, &clear) < 0)
    return core::fail(core::Errc::io_error, path + ": this HDF5 cannot clear a dead writer's marks; run h5clear -s " + path);
  auto f = check<File>(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl->get()), "H5Fopen (clearing write marks)", path);
  if (!f) return tl::make_unexpected(f.error());
  if (!f->reset()) return tl::make_unexpected(error("H5Fclose", path));
  return {};
}

}  // namespace weir::h5
