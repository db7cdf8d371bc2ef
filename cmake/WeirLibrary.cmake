# One way to declare a weir library, used by every module:
#
#   weir_library(NAME
#       [INTERFACE]                 header-only: no SOURCES
#       SOURCES src/a.cpp ...
#       PUBLIC  weir::core ...      what users of the library also see
#       PRIVATE Threads::Threads ...)
#
# declares the target weir_NAME with the alias weir::NAME, C++20, public headers in the folder's
# include/ (when there is one), the project's warning flags, and one object library
# weir_NAME_header_check that compiles every public header (*.hpp, *.h) on its own, so a header
# that forgets an include fails the build.
include_guard(GLOBAL)

function(weir_library name)
  cmake_parse_arguments(arg "INTERFACE" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "weir_library(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  set(target weir_${name})
  set(include_dir ${CMAKE_CURRENT_SOURCE_DIR}/include)

  if(arg_INTERFACE)
    if(arg_SOURCES OR arg_PRIVATE)
      message(FATAL_ERROR "weir_library(${name}): an INTERFACE library has no SOURCES or PRIVATE")
    endif()
    add_library(${target} INTERFACE)
    target_compile_features(${target} INTERFACE cxx_std_20)
    if(EXISTS ${include_dir})
      target_include_directories(${target} INTERFACE ${include_dir})
    endif()
    target_link_libraries(${target} INTERFACE ${arg_PUBLIC})
  else()
    if(NOT arg_SOURCES)
      message(FATAL_ERROR "weir_library(${name}): no SOURCES")
    endif()
    add_library(${target} ${arg_SOURCES})
    target_compile_features(${target} PUBLIC cxx_std_20)
    if(EXISTS ${include_dir})
      target_include_directories(${target} PUBLIC ${include_dir})
    endif()
    target_link_libraries(${target} PUBLIC ${arg_PUBLIC} PRIVATE weir::warnings ${arg_PRIVATE})
    if(WEIR_UNITY_BUILD)
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
    endif()
  endif()
  add_library(weir::${name} ALIAS ${target})

  # Every public header compiles on its own (a C header also as C++: C++ users include it too).
  if(EXISTS ${include_dir})
    file(GLOB_RECURSE headers RELATIVE ${include_dir} CONFIGURE_DEPENDS ${include_dir}/*.hpp ${include_dir}/*.h)
    set(checks)
    foreach(header IN LISTS headers)
      string(MAKE_C_IDENTIFIER ${header} stem)
      set(check ${CMAKE_CURRENT_BINARY_DIR}/header_check/${stem}.cpp)
      file(CONFIGURE OUTPUT ${check} CONTENT "#include \"${header}\"\n")
      list(APPEND checks ${check})
    endforeach()
    if(checks)
      add_library(${target}_header_check OBJECT ${checks})
      set_target_properties(${target}_header_check PROPERTIES UNITY_BUILD OFF)  # each header alone, always
      target_link_libraries(${target}_header_check PRIVATE ${target} weir::warnings)
    endif()
  endif()
endfunction()
