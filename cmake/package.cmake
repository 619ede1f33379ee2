# `cpack -G DEB` in the build folder: fabricbench_<version>_<arch>.deb (the
# binary, profiles, scripts, docs, man page) and, when this build made the GPU
# plugins, fabricbench-gpu_<version>_<arch>.deb with lib/fabricbench/*.so.
set(CPACK_PACKAGE_NAME fabricbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "fabricbench maintainers <fabricbench@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "interconnect acceptance and cost benchmark for GPU clusters (MPI, NCCL)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Debian strips into -dbgsym packages; this one ships stripped binaries.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/package_rpath.cmake)
set(CPACK_COMPONENTS_ALL core)

set(CPACK_DEBIAN_CORE_PACKAGE_NAME fabricbench)
# Description lines under 80 characters (lintian: extended-description-line-too-long).
set(CPACK_COMPONENT_CORE_DESCRIPTION
    "Measures collectives and point-to-point traffic over every path of a GPU\n"
    "cluster under mpirun or srun, checks them against acceptance profiles\n"
    "(JUnit, JSON, exit code) and models what the network costs a training job.\n"
    "The GPU backends are in fabricbench-gpu.")
# The shared libraries' packages come from dpkg-shlibdeps (libopenmpi, yaml-cpp,
# spdlog, fmt, libstdc++); mpirun is no library, so it is named.
set(CPACK_DEBIAN_CORE_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_CORE_PACKAGE_DEPENDS "openmpi-bin")
# plot.py (matplotlib), emulate-cluster.sh (ip, tc), the Slurm job.
set(CPACK_DEBIAN_CORE_PACKAGE_RECOMMENDS "python3, python3-matplotlib, iproute2")
set(CPACK_DEBIAN_CORE_PACKAGE_SUGGESTS "fabricbench-gpu, slurm-client")

if(FABRICBENCH_HAVE_CUDA)
  list(APPEND CPACK_COMPONENTS_ALL gpu)
  set(CPACK_DEBIAN_GPU_PACKAGE_NAME fabricbench-gpu)
  set(CPACK_COMPONENT_GPU_DESCRIPTION
      "The nccl, cuda, mpi-cuda backends and the gemm tool of fabricbench, loaded\n"
      "at run time from /usr/lib/fabricbench. They need the CUDA ${CUDAToolkit_VERSION_MAJOR} runtime and\n"
      "NCCL 2 where the dynamic linker finds them (NVIDIA's apt packages put them\n"
      "there); `fabricbench --version` says which plugin loaded and why another\n"
      "did not.")
  # Exactly this build's binary: a plugin refuses another build's ABI anyway.
  set(CPACK_DEBIAN_GPU_PACKAGE_DEPENDS "fabricbench (= ${PROJECT_VERSION}), libc6, libstdc++6")
  # CUDA and NCCL are rarely dpkg's (a toolkit in /usr/local/cuda, pip wheels,
  # the HPC SDK), so dpkg-shlibdeps cannot name them: NVIDIA's apt package
  # names are recommended, not required.
  set(CPACK_DEBIAN_GPU_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_GPU_PACKAGE_RECOMMENDS
      "libnccl2, cuda-cudart-${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}")
endif()
include(CPack)
