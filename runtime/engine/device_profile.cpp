#include "runtime/engine/device_profile.h"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "runtime/core/error.h"
#include "runtime/engine/shader_library.h"

namespace vkg {

namespace {

std::string bytes_text(uint64_t bytes) {
  std::ostringstream os;
  os.precision(3);
  if (bytes >= (uint64_t(1) << 30)) {
    os << double(bytes) / double(uint64_t(1) << 30) << " GiB";
  } else if (bytes >= (uint64_t(1) << 20)) {
    os << double(bytes) / double(uint64_t(1) << 20) << " MiB";
  } else if (bytes >= 1024) {
    os << double(bytes) / 1024.0 << " KiB";
  } else {
    os << bytes << " B";
  }
  return os.str();
}

std::string shapes_text(const std::vector<CooperativeMatrixShape>& shapes) {
  std::string text;
  for (const CooperativeMatrixShape& c : shapes) {
    text += (text.empty() ? "" : ", ") + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
            std::to_string(c.k) + (c.acc32 ? " fp32 acc" : " fp16 acc");
  }
  return text;
}

// The "cooperative matrix" lines: the extension the tensor-core tactics use and its fp16 shapes,
// then every multiply-add VK_KHR_cooperative_matrix reports.
void format_cooperative_matrices(std::ostream& os, const DeviceProfile& d) {
  os << "    cooperative matrix: ";
  if (d.cooperative_matrix_emulated) {
    os << "emulated for tests (VKGRAPHY_TEST_EMULATED_COOPERATIVE_MATRIX; the shaders' _emu builds), fp16 inputs, "
          "MxNxK: "
       << shapes_text(d.cooperative_matrix_shapes) << "\n";
  } else if (d.cooperative_matrix) {
    os << "yes (" << (d.cooperative_matrix_khr ? "VK_KHR_cooperative_matrix" : "VK_NV_cooperative_matrix")
       << ", fp16 inputs, MxNxK: " << shapes_text(d.cooperative_matrix_shapes) << ")\n";
  } else {
    os << "no\n";
  }
  if (!d.cooperative_matrix_khr_properties.empty()) {
    os << "    VK_KHR_cooperative_matrix (MxNxK A*B+C->D, scope):";
    for (size_t i = 0; i < d.cooperative_matrix_khr_properties.size(); ++i) {
      const CooperativeMatrixProperties& p = d.cooperative_matrix_khr_properties[i];
      os << (i % 3 ? "; " : "\n        ") << p.m << "x" << p.n << "x" << p.k << " " << p.a_type << "*" << p.b_type
         << "+" << p.c_type << "->" << p.result_type << (p.saturating ? " saturating" : "") << ", " << p.scope;
    }
    os << "\n";
    if (!d.cooperative_matrix_khr) {
      os << "        (not used: " << (has_builtin_shader("gemm/coopmat_khr.f16")
                                          ? "turned off, or no fp16 shape the tactics take"
                                          : "this build has no KHR shaders, see cmake/khr_shader_tools.cmake")
         << ")\n";
    }
  }
  if (!d.cooperative_matrix_nv_shapes.empty() && d.cooperative_matrix_khr)
    os << "    VK_NV_cooperative_matrix: " << shapes_text(d.cooperative_matrix_nv_shapes) << " (KHR preferred)\n";
}

}  // namespace

const char* device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::Discrete:
      return "discrete";
    case DeviceType::Integrated:
      return "integrated";
    case DeviceType::Virtual:
      return "virtual";
    case DeviceType::Cpu:
      return "cpu";
    case DeviceType::Other:
      return "other";
  }
  return "other";
}

const char* memory_path_name(MemoryPath p) {
  switch (p) {
    case MemoryPath::Unified:
      return "unified";
    case MemoryPath::Rebar:
      return "resizable-bar";
    case MemoryPath::Staging:
      return "staging";
  }
  return "staging";
}

MemoryPath DeviceProfile::memory_path() const {
  if (force_staging || !device_local_host_visible) return MemoryPath::Staging;
  return device_local_host_cached ? MemoryPath::Unified : MemoryPath::Rebar;
}

std::string DeviceProfile::api_version_string() const {
  // VK_API_VERSION_MAJOR/MINOR/PATCH without the Vulkan header.
  return std::to_string((api_version >> 22) & 0x7Fu) + "." + std::to_string((api_version >> 12) & 0x3FFu) + "." +
         std::to_string(api_version & 0xFFFu);
}

bool DeviceProfile::cooperative_matrix_shape(uint32_t m, uint32_t n, uint32_t k, bool acc32) const {
  return cooperative_matrix && std::find(cooperative_matrix_shapes.begin(), cooperative_matrix_shapes.end(),
                                         CooperativeMatrixShape{m, n, k, acc32}) != cooperative_matrix_shapes.end();
}

bool DeviceProfile::has_feature(const std::string& name) const {
  if (name == "fp16") return fp16();
  if (name == "subgroup-size-control") return subgroup_size_control;
  if (name == "cooperative-matrix") return cooperative_matrix;
  if (name == "cooperative-matrix-khr") return cooperative_matrix_khr;
  if (name == "int64") return shader_int64;
  if (name == "subgroup-shuffle") return subgroup_shuffle;
  if (name == "texel-buffers") return texel_buffers;
  if (name == "nan-preserve") return nan_preserve;
  VKG_THROW("unknown device feature '"
            << name
            << "' (known: fp16, subgroup-size-control, cooperative-matrix, cooperative-matrix-khr, int64, "
               "subgroup-shuffle, texel-buffers, nan-preserve)");
}

std::string DeviceProfile::unsupported_reason() const {
  const uint32_t major = (api_version >> 22) & 0x7Fu;
  const uint32_t minor = (api_version >> 12) & 0x3FFu;
  if (major < 1 || (major == 1 && minor < 2))
    return "Vulkan " + api_version_string() + " is below the 1.2 that vkgraphy's shaders need";
  if (!has_compute_queue) return "no compute queue";
  return "";
}

std::string format_device_info(const DeviceProfile& d) {
  std::ostringstream os;
  auto yes_no = [](bool b) { return b ? "yes" : "no"; };
  os << "[" << d.index << "] " << d.name << "\n";
  os << "    type: " << device_type_name(d.type) << " | vendor 0x" << std::hex << d.vendor_id << ", device 0x"
     << d.device_id << std::dec << " | Vulkan " << d.api_version_string() << "\n";
  os << "    driver: " << (d.driver_name.empty() ? "?" : d.driver_name);
  if (!d.driver_info.empty()) os << " (" << d.driver_info << ")";
  os << " | pipeline cache UUID " << d.uuid << "\n";
  os << "    fp16 arithmetic: " << yes_no(d.shader_float16) << " | 16-bit storage: " << yes_no(d.storage_buffer_16bit)
     << " | subgroup size: " << d.subgroup_size << " | subgroup shuffles: " << yes_no(d.subgroup_shuffle) << "\n";
  os << "    64-bit integers: " << yes_no(d.shader_int64)
     << " (wide loads: gemm.block*_wide_a, conv.*_wide_a; eight-wide stores of the fp32 texel builds)\n";
  os << "    texel buffers: " << yes_no(d.texel_buffers);
  if (d.texel_buffers) os << " (fp32 and fp16 vec4 reads, up to " << d.max_texel_buffer_elements << " texels)";
  os << "\n";
  os << "    NaN/Inf preserved: " << yes_no(d.nan_preserve);
  if (d.nan_preserve)
    os << " (SignedZeroInfNanPreserve in every pipeline, fp32" << (d.nan_preserve_fp16 ? " and fp16)" : ")");
  os << "\n";
  os << "    loop iteration limit: ";
  if (d.loop_iteration_limit)
    os << d.loop_iteration_limit << " per shader invocation (tactics that loop longer decline)\n";
  else
    os << "none\n";
  os << "    fp16 slower than fp32: " << yes_no(d.fp16_slower)
     << (d.fp16_slower ? " (--fp16 makes every layer that can be fp16 fp16: --fp16-policy auto)\n" : "\n");
  os << "    SPIR-V specialized on the host: " << yes_no(d.host_specialization)
     << (d.host_specialization ? " (pipelines get each shader with its constants folded in)\n" : "\n");
  os << "    texel views of one class (one compile of a pipeline for every buffer): " << yes_no(d.canonical_texel_views)
     << "\n";
  os << "    compiles one pipeline at a time per process: " << yes_no(d.compiles_in_one_thread)
     << (d.compiles_in_one_thread ? " (worker processes compile a layer's candidates side by side: --compile-workers)\n"
                                  : "\n");
  os << "    subgroup size control: ";
  if (d.subgroup_size_control) {
    os << "yes (" << d.min_subgroup_size << " to " << d.max_subgroup_size << ", full subgroups)\n";
  } else {
    os << "no\n";
  }
  format_cooperative_matrices(os, d);
  os << "    timestamps: ";
  if (d.timestamps()) {
    os << "yes (queue family " << d.compute_queue_family << ", " << d.timestamp_valid_bits << " valid bits, "
       << d.timestamp_period_ns << " ns per tick)\n";
  } else {
    os << "no\n";
  }
  os << "    limits: workgroup size [" << d.max_workgroup_size[0] << ", " << d.max_workgroup_size[1] << ", "
     << d.max_workgroup_size[2] << "], invocations " << d.max_workgroup_invocations << ", workgroup count ["
     << d.max_workgroup_count[0] << ", " << d.max_workgroup_count[1] << ", " << d.max_workgroup_count[2] << "]\n";
  os << "            shared memory " << bytes_text(d.max_shared_memory_bytes) << ", storage buffer range "
     << bytes_text(d.max_storage_buffer_range) << ", storage buffers per stage " << d.max_storage_buffers_per_stage
     << ", push constants " << d.max_push_constants_bytes << " B\n";
  os << "            offset alignment: storage buffers " << d.min_storage_buffer_offset_alignment
     << " B, texel buffers " << d.min_texel_buffer_offset_alignment << " B\n";
  os << "    memory heaps:";
  for (size_t i = 0; i < d.heaps.size(); ++i) {
    os << (i ? "," : "") << " " << bytes_text(d.heaps[i].size_bytes)
       << (d.heaps[i].device_local ? " (device-local)" : "");
  }
  os << "\n";
  os << "    memory path: " << memory_path_name(d.memory_path());
  switch (d.memory_path()) {
    case MemoryPath::Unified:
      os << " (device-local memory is host-visible and cached: written and read in place)";
      break;
    case MemoryPath::Rebar:
      os << " (device-local memory is host-visible, uncached: weights and inputs written in place, outputs staged)";
      break;
    case MemoryPath::Staging:
      os << (d.force_staging ? " (forced by --vk-force-staging" : " (device-local memory is not host-visible")
         << ": weights uploaded once through staging, inputs and outputs copied through staging buffers)";
      break;
  }
  os << "\n";
  const std::string why = d.unsupported_reason();
  if (!why.empty()) os << "    unsupported: " << why << "\n";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const DeviceProfile& info) { return os << format_device_info(info); }

}  // namespace vkg
