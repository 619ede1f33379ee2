# Detect CUDA and NCCL. Both are optional: without them fabricbench builds the
# host backends only and says at run time which GPU backends are absent and why.
set(FABRICBENCH_HAVE_CUDA OFF)
set(FABRICBENCH_HAVE_NCCL OFF)
set(FABRICBENCH_GPU_ABSENT_REASON "built without GPU support (FABRICBENCH_GPU=OFF)")
set(FABRICBENCH_NCCL_ABSENT_REASON "${FABRICBENCH_GPU_ABSENT_REASON}")
if(FABRICBENCH_GPU)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Ampere and Hopper machine code plus PTX for later chips.
      set(CMAKE_CUDA_ARCHITECTURES "80-real;90-real;90-virtual")
    endif()
    enable_language(CUDA)
    # CMake before 3.27 knows no C++20 dialect for nvcc (which has it since
    # CUDA 12); the kernels include the C++20 engine headers.
    if(CMAKE_VERSION VERSION_LESS 3.27 AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
      list(APPEND CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
    endif()
    find_package(CUDAToolkit REQUIRED)
    set(FABRICBENCH_HAVE_CUDA ON)
    set(FABRICBENCH_GPU_ABSENT_REASON "")
    find_path(NCCL_INCLUDE_DIR nccl.h
      HINTS $ENV{NCCL_HOME} ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}
      PATH_SUFFIXES include)
    find_library(NCCL_LIBRARY NAMES nccl
      HINTS $ENV{NCCL_HOME} ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}
      PATH_SUFFIXES lib lib64)
    set(FABRICBENCH_NCCL_ABSENT_REASON
        "built without NCCL (nccl.h or libnccl not found at configure time; set NCCL_HOME)")
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      set(FABRICBENCH_HAVE_NCCL ON)
      set(FABRICBENCH_NCCL_ABSENT_REASON "")
      add_library(fb_nccl INTERFACE)
      target_include_directories(fb_nccl INTERFACE ${NCCL_INCLUDE_DIR})
      target_link_libraries(fb_nccl INTERFACE ${NCCL_LIBRARY})
    endif()
    find_path(NVML_INCLUDE_DIR nvml.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  else()
    set(FABRICBENCH_GPU_ABSENT_REASON "built without CUDA (no CUDA compiler found at configure time)")
    set(FABRICBENCH_NCCL_ABSENT_REASON "${FABRICBENCH_GPU_ABSENT_REASON}")
  endif()
endif()
# The plugins this build makes (src/backends/CMakeLists.txt), for the registry's "why absent".
set(FB_BUILT_PLUGINS "")
if(FABRICBENCH_HAVE_CUDA)
  set(FB_BUILT_PLUGINS "cuda mpi-cuda gemm")
  if(FABRICBENCH_HAVE_NCCL)
    string(PREPEND FB_BUILT_PLUGINS "nccl ")
  endif()
endif()
message(STATUS "fabricbench: CUDA ${FABRICBENCH_HAVE_CUDA}, NCCL ${FABRICBENCH_HAVE_NCCL}, plugins: ${FB_BUILT_PLUGINS}")
