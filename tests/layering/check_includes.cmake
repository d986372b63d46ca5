# The arrows inside runtime/ point one way (DESIGN.md, "Layout"):
# vulkan -> engine (builder, tactics, engine files) -> core, and runtime never
# includes debug/ or tools/. This script fails when a file includes against
# them: `cmake -DSOURCE_DIR=<repo> -P check_includes.cmake` (ctest: layering).

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_includes.cmake: pass -DSOURCE_DIR=<the repository root>")
endif()

# Each rule: folders (under SOURCE_DIR), a regex an include line must not match, and why.
set(rule_names engine_vulkan core_up runtime_debug)
set(engine_vulkan_dirs runtime/engine runtime/tactics)
set(engine_vulkan_regex "#[ \t]*include[ \t]*\"runtime/vulkan/")
set(engine_vulkan_why "the engine layer is handed a plain-data device profile and owns the shader library")
set(core_up_dirs runtime/core)
set(core_up_regex "#[ \t]*include[ \t]*\"runtime/(engine|vulkan|tactics|reference)/")
set(core_up_why "the core (IR, tensors, errors) sits below every other layer")
set(runtime_debug_dirs runtime)
set(runtime_debug_regex "#[ \t]*include[ \t]*\"(debug|tools)/")
set(runtime_debug_why "the library never depends on the debug tools or the command line")

set(violations "")
foreach(rule IN LISTS rule_names)
  set(checked 0)
  foreach(dir IN LISTS ${rule}_dirs)
    if(NOT IS_DIRECTORY "${SOURCE_DIR}/${dir}")
      message(FATAL_ERROR "check_includes.cmake: no folder ${SOURCE_DIR}/${dir}")
    endif()
    file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${dir}/*.h" "${SOURCE_DIR}/${dir}/*.cpp")
    foreach(file IN LISTS files)
      math(EXPR checked "${checked} + 1")
      file(STRINGS "${SOURCE_DIR}/${file}" lines REGEX "${${rule}_regex}")
      foreach(line IN LISTS lines)
        string(STRIP "${line}" line)
        string(APPEND violations "  ${file}: ${line} (${${rule}_why})\n")
      endforeach()
    endforeach()
  endforeach()
  if(checked EQUAL 0)
    message(FATAL_ERROR "check_includes.cmake: rule ${rule} found no files to check")
  endif()
endforeach()

if(violations)
  message(FATAL_ERROR "includes against the layering of runtime/ (DESIGN.md, \"Layout\"):\n${violations}")
endif()
message(STATUS "runtime/ layering: no include points the wrong way")
