# What `cmake --install build --prefix P` puts under P (and what cpack packs):
#   bin/fabricbench                 the binary (component core)
#   lib/fabricbench/*.so            the GPU plugins, when built (component gpu, src/backends)
#   share/fabricbench/profiles/     acceptance profiles, presets, workloads, quotes
#   share/fabricbench/scripts/      the scripts a user runs: the Slurm job, its mpirun twin, plots, emulated nodes
#   share/doc/fabricbench/          README.md and docs/
#   share/man/man1/fabricbench.1.gz the manual page (gzip -9n, as Debian policy asks: man reads it as is)
# The binary finds the profiles and the plugins relative to itself, so the
# prefix may be moved or a .deb unpacked anywhere (dpkg-deb -x).
install(TARGETS fabricbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT core)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/profiles/ DESTINATION ${FB_INSTALL_DATADIR}/profiles COMPONENT core
        FILES_MATCHING PATTERN "*.yaml")
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/acceptance-mpirun.sh ${PROJECT_SOURCE_DIR}/scripts/emulate-cluster.sh
                 ${PROJECT_SOURCE_DIR}/scripts/plot.py
        DESTINATION ${FB_INSTALL_DATADIR}/scripts COMPONENT core)
# The one place the scripts look for the binary: FABRICBENCH, else PREFIX/bin beside them, else the PATH.
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/lib/fabricbench-binary.sh
        DESTINATION ${FB_INSTALL_DATADIR}/scripts/lib COMPONENT core)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/slurm/acceptance.sbatch ${PROJECT_SOURCE_DIR}/scripts/slurm/drain-blamed.sh
                 ${PROJECT_SOURCE_DIR}/scripts/slurm/health-check.sh
        DESTINATION ${FB_INSTALL_DATADIR}/scripts/slurm COMPONENT core)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scripts/plots/ DESTINATION ${FB_INSTALL_DATADIR}/scripts/plots COMPONENT core
        FILES_MATCHING PATTERN "*.py")
# README's links (docs/...) hold in the installed copy too.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT core)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT core
        PATTERN "*.1" EXCLUDE)
# -n: no name or time stamp in the gzip header, so the page is the same bytes in every build.
find_program(FB_GZIP gzip REQUIRED)
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/fabricbench.1.gz
                   COMMAND ${FB_GZIP} -9n -c ${PROJECT_SOURCE_DIR}/docs/fabricbench.1 > ${PROJECT_BINARY_DIR}/fabricbench.1.gz
                   DEPENDS ${PROJECT_SOURCE_DIR}/docs/fabricbench.1 VERBATIM)
add_custom_target(fb_man_page ALL DEPENDS ${PROJECT_BINARY_DIR}/fabricbench.1.gz)
install(FILES ${PROJECT_BINARY_DIR}/fabricbench.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT core)
