// Row geometry of the reduce family (RowGeometry in runtime/tactics/reduce.cpp).
// A layer works on `rows` rows; row o reads the input elements
//   vkg_row_offset(o, kept_dims, kept_strides) + vkg_row_offset(r, red_dims, red_strides)
// for r in [0, reduced), r row-major over the reduced axes. Both sides are four
// (dim, stride) runs, outermost first; unused runs are (1, 0). Every shader of
// the family starts its push constants with VKG_ROW_GEOMETRY (18 words):
//   uvec4 kept_dims, kept_strides, red_dims, red_strides; uint rows, reduced;
// The reduce and norm shaders take the reduced runs in use as the
// specialization constant kRuns (1: element r is at r * red_strides.w);
// softmax rows always have one run.
#ifndef VKG_REDUCE_ROWS_GLSL
#define VKG_REDUCE_ROWS_GLSL

#define VKG_ROW_GEOMETRY \
  uvec4 kept_dims;       \
  uvec4 kept_strides;    \
  uvec4 red_dims;        \
  uvec4 red_strides;     \
  uint rows;             \
  uint reduced;

// The offset of the i-th element (row-major) of a four-run index space.
uint vkg_row_offset(uint i, uvec4 dims, uvec4 strides) {
  uint offset = (i % dims.w) * strides.w;
  i /= dims.w;
  offset += (i % dims.z) * strides.z;
  i /= dims.z;
  offset += (i % dims.y) * strides.y;
  i /= dims.y;
  return offset + i * strides.x;
}

// Steps `offset` from one reduced element to the next in row-major order;
// `pos` holds the positions in the three innermost runs (start at 0).
void vkg_next_reduced(inout uint offset, inout uvec3 pos, uvec4 dims, uvec4 strides) {
  offset += strides.w;
  pos.z += 1;
  if (pos.z < dims.w) return;
  pos.z = 0;
  offset += strides.z - dims.w * strides.w;
  pos.y += 1;
  if (pos.y < dims.z) return;
  pos.y = 0;
  offset += strides.y - dims.z * strides.z;
  pos.x += 1;
  if (pos.x < dims.y) return;
  pos.x = 0;
  offset += strides.x - dims.y * strides.y;
}

// A cursor over the reduced elements of one row, in order (see vkg_element).
struct VkgCursor {
  uint offset;  // the next element's
  uvec3 pos;    // its position in the three innermost runs
};

VkgCursor vkg_cursor(uint base) { return VkgCursor(base, uvec3(0)); }

// The offset of element r of the row at `base`, for rows walked in order
// r = 0, 1, ...: with one reduced run (one_run, a specialization constant in
// the callers) simply base + r * strides.w; otherwise the cursor's, which then
// steps to the next element.
uint vkg_element(bool one_run, uint base, uint r, inout VkgCursor c, uvec4 dims, uvec4 strides) {
  if (one_run) return base + r * strides.w;
  const uint offset = c.offset;
  vkg_next_reduced(c.offset, c.pos, dims, strides);
  return offset;
}

// The workgroup a cooperative shader works on (group counts from linear_groups()).
uint vkg_workgroup_index() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// fp16 sums run in blocks of this many elements (partial sums added to a
// total), which keeps their error near (kSumBlock + n / kSumBlock) ulps; fp32
// sums need no blocks.
#if defined(VKG_PRECISION_F16)
const uint kSumBlock = 32;
#else
const uint kSumBlock = 0x40000000;
#endif

// The end of the block of elements that starts at r0.
uint vkg_block_end(uint r0, uint n) { return min(n, r0 + kSumBlock); }

// How many of the elements lane, lane + lanes, ... are below n.
uint vkg_lane_count(uint n, uint lane, uint lanes) { return lane < n ? (n - lane + lanes - 1) / lanes : 0; }

float vkg_inf() { return uintBitsToFloat(0x7f800000u); }
float vkg_nan() { return uintBitsToFloat(0x7fc00000u); }

// log(v) with log(0) = -inf and log(negative) = NaN (GLSL leaves both undefined).
float vkg_log(float v) {
  if (v == 0.0) return -vkg_inf();
  if (v < 0.0) return vkg_nan();
  return log(v);
}

#endif  // VKG_REDUCE_ROWS_GLSL
