# Fetches PACKAGE@VERSION with `npm pack` (NPM: the npm command) into DIR, checks the tarball's SHA512
# against the one recorded in tools/serve/CMakeLists.txt and unpacks it to DIR/package, so the page's
# plotting library comes from the build, never from the repository. Run as `cmake -P` at build time;
# a tarball already there with the right digest is used as it is (no network for a rebuild), and npm
# answers from its own cache when it can (another build directory: no network either).
set(tarball ${DIR}/${PACKAGE}-${VERSION}.tgz)
set(how "weir serve's page bundles ${PACKAGE} ${VERSION} from npm when it builds: install Node.js and npm \
(Debian: apt-get install nodejs npm, or scripts/deps.sh) and let npm reach its registry (npm config get registry)")
file(MAKE_DIRECTORY ${DIR})
set(have "")
if(EXISTS ${tarball})
  file(SHA512 ${tarball} have)
endif()
if(NOT have STREQUAL SHA512)
  file(REMOVE ${tarball})
  execute_process(
      COMMAND ${NPM} pack ${PACKAGE}@${VERSION} --ignore-scripts --prefer-offline --silent --pack-destination ${DIR}
      WORKING_DIRECTORY ${DIR}
      RESULT_VARIABLE failed OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(failed OR NOT EXISTS ${tarball})
    message(FATAL_ERROR "`npm pack ${PACKAGE}@${VERSION}` failed (${failed}): ${err}\n${how}")
  endif()
  file(SHA512 ${tarball} have)
  if(NOT have STREQUAL SHA512)
    file(RENAME ${tarball} ${tarball}.rejected)
    message(FATAL_ERROR "${PACKAGE}-${VERSION}.tgz from npm has SHA512 ${have}, not the ${SHA512} recorded in "
                        "tools/serve/CMakeLists.txt: the package changed. Kept as ${tarball}.rejected; check it "
                        "before recording its digest.")
  endif()
endif()
file(REMOVE_RECURSE ${DIR}/package)
file(ARCHIVE_EXTRACT INPUT ${tarball} DESTINATION ${DIR})
string(REPLACE "," ";" EXPECT "${EXPECT}")
foreach(f IN LISTS EXPECT)
  if(NOT EXISTS ${DIR}/package/${f})
    message(FATAL_ERROR "${PACKAGE}-${VERSION}.tgz has no ${f}")
  endif()
  file(TOUCH ${DIR}/package/${f})  # newer than the stamp's inputs: the build does not fetch again
endforeach()
