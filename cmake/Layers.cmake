# Layers.cmake - one static library per source folder, linked bottom-up.
#
# sluice_layer(NAME DEPS a b ... [EXTRA_SOURCES ...]) makes the library
# sl_NAME of every .c file under the folder NAME/ (subfolders included),
# linked PUBLIC to the libraries of the folders it may call.  It also
# links `layer_check_NAME`: an executable holding the WHOLE library and
# only what it declared, so a call to a folder it did not declare (a call
# up the layers, or sideways past the map) fails the build with an
# undefined reference.  The map in docs/ARCHITECTURE.md is these DEPS.
set(SLUICE_LAYER_CHECK_MAIN ${CMAKE_BINARY_DIR}/layer_check_main.c)
file(WRITE ${SLUICE_LAYER_CHECK_MAIN}.in "int main(void) { return 0; }\n")
configure_file(${SLUICE_LAYER_CHECK_MAIN}.in ${SLUICE_LAYER_CHECK_MAIN} COPYONLY)

function(sluice_layer name)
  cmake_parse_arguments(L "" "" "DEPS;EXTRA_SOURCES" ${ARGN})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.c)
  list(FILTER srcs EXCLUDE REGEX "/main\\.c$")
  add_library(sl_${name} STATIC ${srcs} ${L_EXTRA_SOURCES})
  target_include_directories(sl_${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  set(deps)
  foreach(d ${L_DEPS})
    list(APPEND deps sl_${d})
  endforeach()
  target_link_libraries(sl_${name} PUBLIC ${deps})
  add_executable(layer_check_${name} ${SLUICE_LAYER_CHECK_MAIN})
  target_link_libraries(layer_check_${name} PRIVATE
    -Wl,--whole-archive sl_${name} -Wl,--no-whole-archive ${deps})
endfunction()
