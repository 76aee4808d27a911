# Finds every dependency Sluice builds against.  Each comes from a Debian
# package; a missing one stops configuration with the package to install.
# (The README's set-up command installs all of them.)
find_package(PkgConfig)

function(sluice_missing what package)
  message(FATAL_ERROR
    "Sluice needs ${what}, which was not found.\n"
    "Install it with:  sudo apt-get install ${package}\n"
    "(or run the set-up command at the top of README.md)")
endfunction()

if(NOT PKG_CONFIG_FOUND)
  sluice_missing("pkg-config" "pkg-config")
endif()

# lemon, SQLite's LALR(1) parser generator, and its template lempar.c.
find_program(LEMON_EXECUTABLE lemon)
find_file(LEMON_TEMPLATE lempar.c PATHS /usr/share/lemon /usr/local/share/lemon
          NO_DEFAULT_PATH)
if(NOT LEMON_EXECUTABLE OR NOT LEMON_TEMPLATE)
  sluice_missing("the lemon parser generator" "lemon")
endif()

# LLVM C API (llvm-config from llvm-dev; LLVM 14 on Debian 12, newer works).
find_program(LLVM_CONFIG NAMES llvm-config llvm-config-16 llvm-config-15
             llvm-config-14)
if(NOT LLVM_CONFIG)
  sluice_missing("LLVM (llvm-config)" "llvm-dev")
endif()
execute_process(COMMAND ${LLVM_CONFIG} --version OUTPUT_VARIABLE LLVM_VERSION
                OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${LLVM_CONFIG} --includedir
                OUTPUT_VARIABLE LLVM_INCLUDE_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${LLVM_CONFIG} --libdir
                OUTPUT_VARIABLE LLVM_LIB_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${LLVM_CONFIG} --libs core orcjit native passes
                OUTPUT_VARIABLE LLVM_LIBS OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE LLVM_LIBS_RESULT)
if(NOT LLVM_LIBS_RESULT EQUAL 0 OR NOT EXISTS "${LLVM_INCLUDE_DIR}/llvm-c/Core.h")
  sluice_missing("the LLVM C API headers and libraries" "llvm-dev")
endif()
if(LLVM_VERSION VERSION_LESS 14)
  message(FATAL_ERROR "Sluice needs LLVM 14 or newer; found ${LLVM_VERSION}.")
endif()
message(STATUS "LLVM ${LLVM_VERSION} at ${LLVM_LIB_DIR}")

# rdma-core: verbs and the RDMA connection manager.
find_path(IBVERBS_INCLUDE_DIR infiniband/verbs.h)
find_library(IBVERBS_LIBRARY ibverbs)
if(NOT IBVERBS_INCLUDE_DIR OR NOT IBVERBS_LIBRARY)
  sluice_missing("libibverbs (rdma-core)" "libibverbs-dev")
endif()
find_path(RDMACM_INCLUDE_DIR rdma/rdma_cma.h)
find_library(RDMACM_LIBRARY rdmacm)
if(NOT RDMACM_INCLUDE_DIR OR NOT RDMACM_LIBRARY)
  sluice_missing("librdmacm (rdma-core)" "librdmacm-dev")
endif()

pkg_check_modules(LIBEDIT libedit)
if(NOT LIBEDIT_FOUND)
  sluice_missing("libedit (line editing)" "libedit-dev")
endif()
pkg_check_modules(SQLITE3 sqlite3)
if(NOT SQLITE3_FOUND)
  sluice_missing("SQLite" "libsqlite3-dev")
endif()
pkg_check_modules(PCRE2 libpcre2-8)
if(NOT PCRE2_FOUND)
  sluice_missing("PCRE2" "libpcre2-dev")
endif()
pkg_check_modules(SODIUM libsodium)
if(NOT SODIUM_FOUND)
  sluice_missing("libsodium (the cluster secret's HMAC)" "libsodium-dev")
endif()
pkg_check_modules(CMOCKA cmocka)
if(NOT CMOCKA_FOUND)
  sluice_missing("cmocka (unit tests)" "libcmocka-dev")
endif()
