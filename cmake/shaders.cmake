# Shaders: every shaders/**/*.comp is compiled to SPIR-V by glslang
# (--target-env vulkan1.2 -V), checked by spirv-val, and embedded into
# vkgraphy_runtime as a generated table (name -> words, runtime/vulkan/shader_table.h).
#
# A shader is compiled once per precision variant named on a line
#   // vkgraphy-variants: f32 f16
# (default: f32). Variant V defines VKG_PRECISION_<V upper-cased> (see
# shaders/common/precision.glsl) and the table names it "<dir>/<file>.<V>",
# e.g. "elementwise/add.f16". A shader with a line
#   // vkgraphy-texel-reads
# is compiled once more per variant with VKG_TEXEL_READS defined, named
# "<dir>/<file>_texel.<V>": its float inputs read through uniform texel buffers
# (shaders/common/texel_reads.glsl). Includes are resolved from shaders/.
#
# A shader with a line
#   // vkgraphy-coopmat-khr
# (cooperative matrices through shaders/common/coopmat.glsl) is compiled once more per variant
# with VKG_COOPMAT_KHR defined, named "<dir>/<file>_khr.<V>": the VK_KHR_cooperative_matrix
# form, by the newer glslang of cmake/khr_shader_tools.cmake, and left out without it. One with a
# line
#   // vkgraphy-coopmat-emulated
# is compiled once more per variant with VKG_COOPMAT_EMULATED defined, named
# "<dir>/<file>_emu.<V>": its cooperative matrices emulated, for the tests on lavapipe.
#
# VKGRAPHY_SPIRV_FROM=<another build>/generated/shaders embeds the SPIR-V that build compiled
# and validated instead of compiling it again (the sanitizer and coverage builds take the
# Release build's: the shaders do not depend on the C++ flags).
set(VKGRAPHY_SPIRV_FROM "" CACHE PATH "generated/shaders of another build whose SPIR-V to embed")

find_package(Vulkan REQUIRED COMPONENTS glslangValidator)
find_program(VKGRAPHY_SPIRV_VAL NAMES spirv-val HINTS "$ENV{VULKAN_SDK}/bin" REQUIRED)
if(NOT VKGRAPHY_SPIRV_FROM)
  include(${CMAKE_CURRENT_LIST_DIR}/khr_shader_tools.cmake)
endif()

set(VKGRAPHY_SHADER_DIR ${CMAKE_SOURCE_DIR}/shaders)
set(VKGRAPHY_SHADER_OUT ${CMAKE_BINARY_DIR}/generated/shaders)
file(GLOB_RECURSE VKGRAPHY_SHADER_SOURCES CONFIGURE_DEPENDS ${VKGRAPHY_SHADER_DIR}/*.comp)
list(SORT VKGRAPHY_SHADER_SOURCES)

set(VKGRAPHY_KHR_SHADERS_EMBEDDED OFF)  # ON once a "_khr" build is in the table (tests read it)
set(VKGRAPHY_SHADER_OUTPUTS "")
set(VKGRAPHY_SHADER_ARRAYS "")
set(VKGRAPHY_SHADER_ENTRIES "")
foreach(source IN LISTS VKGRAPHY_SHADER_SOURCES)
  file(RELATIVE_PATH rel ${VKGRAPHY_SHADER_DIR} ${source})
  string(REGEX REPLACE "\\.comp$" "" base ${rel})
  # The variant and texel lines are read here: editing a shader re-runs this.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})
  file(STRINGS ${source} variant_line REGEX "^// *vkgraphy-variants:" LIMIT_COUNT 1)
  if(variant_line)
    string(REGEX REPLACE "^// *vkgraphy-variants:" "" variants "${variant_line}")
    string(STRIP "${variants}" variants)
    separate_arguments(variants UNIX_COMMAND "${variants}")
  else()
    set(variants f32)
  endif()
  file(STRINGS ${source} texel_line REGEX "^// *vkgraphy-texel-reads" LIMIT_COUNT 1)
  file(STRINGS ${source} khr_line REGEX "^// *vkgraphy-coopmat-khr" LIMIT_COUNT 1)
  file(STRINGS ${source} emu_line REGEX "^// *vkgraphy-coopmat-emulated" LIMIT_COUNT 1)
  set(builds "")
  foreach(variant IN LISTS variants)
    list(APPEND builds "${variant}:")
    if(texel_line)
      list(APPEND builds "${variant}:_texel")
    endif()
    if(khr_line AND (VKGRAPHY_KHR_SHADERS OR (VKGRAPHY_SPIRV_FROM AND
                                                EXISTS ${VKGRAPHY_SPIRV_FROM}/${base}_khr.${variant}.spv.inc)))
      list(APPEND builds "${variant}:_khr")
      set(VKGRAPHY_KHR_SHADERS_EMBEDDED ON)
    endif()
    if(emu_line)
      list(APPEND builds "${variant}:_emu")
    endif()
  endforeach()
  foreach(build IN LISTS builds)
    string(REGEX REPLACE ":.*$" "" variant "${build}")
    string(REGEX REPLACE "^[^:]*:" "" suffix "${build}")
    string(TOUPPER ${variant} variant_upper)
    set(name ${base}${suffix}.${variant})
    string(MAKE_C_IDENTIFIER "k_${name}" array)
    if(VKGRAPHY_SPIRV_FROM)
      set(inc ${VKGRAPHY_SPIRV_FROM}/${name}.spv.inc)
      if(NOT EXISTS ${inc} OR NOT EXISTS ${VKGRAPHY_SPIRV_FROM}/${name}.spv.validated)
        message(FATAL_ERROR "VKGRAPHY_SPIRV_FROM: ${VKGRAPHY_SPIRV_FROM} has no validated ${name}.spv.inc: build that build first")
      endif()
      list(APPEND VKGRAPHY_SHADER_OUTPUTS ${inc})
    else()
      set(spv ${VKGRAPHY_SHADER_OUT}/${name}.spv)
      set(inc ${VKGRAPHY_SHADER_OUT}/${name}.spv.inc)
      set(validated ${VKGRAPHY_SHADER_OUT}/${name}.spv.validated)
      get_filename_component(out_dir ${spv} DIRECTORY)
      set(glslang_args --target-env vulkan1.2 -V -DVKG_PRECISION_${variant_upper}=1 -I${VKGRAPHY_SHADER_DIR})
      set(glslang Vulkan::glslangValidator)
      set(spirv_val ${VKGRAPHY_SPIRV_VAL})
      if(suffix STREQUAL "_texel")
        list(APPEND glslang_args -DVKG_TEXEL_READS=1)
      elseif(suffix STREQUAL "_emu")
        list(APPEND glslang_args -DVKG_COOPMAT_EMULATED=1)
      elseif(suffix STREQUAL "_khr")
        list(APPEND glslang_args -DVKG_COOPMAT_KHR=1)
        set(glslang ${VKGRAPHY_KHR_GLSLANG})
        set(spirv_val ${VKGRAPHY_KHR_SPIRV_VAL})
      endif()
      add_custom_command(
        OUTPUT ${spv} ${inc}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
        COMMAND ${glslang} ${glslang_args} --depfile ${spv}.d -o ${spv} ${source}
        COMMAND ${CMAKE_COMMAND} -DSPV=${spv} -DINC=${inc} -P ${CMAKE_SOURCE_DIR}/cmake/spirv_words.cmake
        DEPENDS ${source} ${CMAKE_SOURCE_DIR}/cmake/spirv_words.cmake
        DEPFILE ${spv}.d
        COMMENT "glslang: ${name}"
        VERBATIM)
      add_custom_command(
        OUTPUT ${validated}
        COMMAND ${spirv_val} --target-env vulkan1.2 ${spv}
        COMMAND ${CMAKE_COMMAND} -E touch ${validated}
        DEPENDS ${spv}
        COMMENT "spirv-val: ${name}"
        VERBATIM)
      list(APPEND VKGRAPHY_SHADER_OUTPUTS ${inc} ${validated})
    endif()
    string(APPEND VKGRAPHY_SHADER_ARRAYS "const uint32_t ${array}[] = {\n#include \"${inc}\"\n};\n")
    string(APPEND VKGRAPHY_SHADER_ENTRIES "    {\"${name}\", ${array}, std::size(${array})},\n")
  endforeach()
endforeach()

set(VKGRAPHY_SHADER_TABLE ${VKGRAPHY_SHADER_OUT}/shader_table.cpp)
file(CONFIGURE OUTPUT ${VKGRAPHY_SHADER_TABLE} CONTENT [[
// Generated by cmake/shaders.cmake: the SPIR-V of every shader in shaders/.
#include <cstdint>
#include <iterator>

#include "runtime/engine/shader_library.h"

namespace vkg {
namespace {
@VKGRAPHY_SHADER_ARRAYS@
const ShaderBinary kShaders[] = {
@VKGRAPHY_SHADER_ENTRIES@    {nullptr, nullptr, 0},
};
}  // namespace

std::span<const ShaderBinary> builtin_shaders() { return {kShaders, std::size(kShaders) - 1}; }

}  // namespace vkg
]] @ONLY)

# The custom commands run before the table is compiled because their outputs are
# sources of the same target.
target_sources(vkgraphy_runtime PRIVATE ${VKGRAPHY_SHADER_TABLE} ${VKGRAPHY_SHADER_OUTPUTS})
set_source_files_properties(${VKGRAPHY_SHADER_TABLE} PROPERTIES OBJECT_DEPENDS "${VKGRAPHY_SHADER_OUTPUTS}")
