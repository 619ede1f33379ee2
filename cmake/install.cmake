# What `cmake --install build --prefix P` puts under P (and what cpack packs):
#   bin/fabricbench                 the binary (component core)
#   lib/fabricbench/*.so            the GPU plugins, when built (component gpu, src/backends)
#   share/fabricbench/profiles/     acceptance profiles, presets, workloads, quotes
#   share/fabricbench/scripts/      the scripts a user runs: the Slurm job, its mpirun twin, plots, emulated nodes
#   share/doc/fabricbench/          README.md and docs/
#   share/man/man1/fabricbench.1    the manual page
# The binary finds the profiles and the plugins relative to itself, so the
# prefix may be moved or a .deb unpacked anywhere (dpkg-deb -x).
install(TARGETS fabricbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT core)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/profiles/ DESTINATION ${FB_INSTALL_DATADIR}/profiles COMPONENT core
        FILES_MATCHING PATTERN "*.yaml")
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/acceptance-mpirun.sh ${PROJECT_SOURCE_DIR}/scripts/emulate-cluster.sh
                 ${PROJECT_SOURCE_DIR}/scripts/plot.py
        DESTINATION ${FB_INSTALL_DATADIR}/scripts COMPONENT core)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/slurm/acceptance.sbatch
        DESTINATION ${FB_INSTALL_DATADIR}/scripts/slurm COMPONENT core)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scripts/plots/ DESTINATION ${FB_INSTALL_DATADIR}/scripts/plots COMPONENT core
        FILES_MATCHING PATTERN "*.py")
# README's links (docs/...) hold in the installed copy too.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT core)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT core
        PATTERN "*.1" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/docs/fabricbench.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT core)
