# CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS, cmake/package.cmake): the
# packaged binary and plugins carry no run path into other folders, as Debian
# policy asks (lintian: custom-library-search-path). A package's libraries
# come from dpkg (Open MPI, yaml-cpp, spdlog) or from NVIDIA's packages, which
# put libcudart and libnccl where the dynamic linker looks (the multiarch
# folder, /etc/ld.so.conf.d); `cmake --install` into a prefix keeps the run
# paths that let a build against /opt/hpcx or /usr/local/cuda start as is.
# The plugins keep $ORIGIN (each other's folder).
file(GLOB_RECURSE fb_staged LIST_DIRECTORIES false "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*")
set(fb_packaged_elves ${fb_staged})
list(FILTER fb_packaged_elves INCLUDE REGEX "/bin/fabricbench$|/lib/fabricbench/[^/]+\\.so$")
foreach(f IN LISTS fb_packaged_elves)
  if(f MATCHES "\\.so$")
    file(RPATH_SET FILE "${f}" NEW_RPATH "$ORIGIN")
  else()
    file(RPATH_REMOVE FILE "${f}")
  endif()
endforeach()
if(NOT fb_packaged_elves)
  message(FATAL_ERROR "package_rpath.cmake: no fabricbench binary under ${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
endif()
