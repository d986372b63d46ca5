// Reading ONNX models (libonnx's protobuf) into the graph IR.
//
// Import is: load the protobuf (with external data) -> validate the structure
// (names, opsets, SSA, dangling inputs) -> override input shapes -> ONNX shape
// inference -> fold constants and static shape subgraphs -> topological sort ->
// Graph. Every failure is a vkg::Error whose message names the file and the
// problem; nothing here crashes on a malformed model.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/graph.h"

namespace onnx {
class ModelProto;
class OpSchema;
class NodeProto;
class TensorProto;
class TensorShapeProto;
class ValueInfoProto;
}  // namespace onnx

namespace vkg {

// The newest opset of the default ONNX domain that import follows.
constexpr int64_t kMaxSupportedOpset = 23;

// Registers, once, the schemas of the op versions of opsets 18..23 that changed an op's
// form (the installed ONNX 1.12 stops at opset 17), each with vkgraphy's own shape rule,
// into ONNX's schema registry: its checker and shape inference then cover them. Every
// import step calls it; calling it again does nothing.
void register_newer_onnx_schemas();
// True for the schemas registered above (their shape rules are vkgraphy's, not ONNX's).
bool is_vkgraphy_schema(const onnx::OpSchema& schema);

// Dimension overrides: -1 leaves a dimension dynamic.
using InputShapes = std::map<std::string, Shape>;

struct ImportOptions {
  InputShapes input_shapes;      // --input-shapes / --override-input-shapes
  bool shape_inference = true;   // run ONNX shape inference
  bool fold_constants = true;    // fold constant and static-shape subgraphs
  bool load_external_data = true;
  std::string external_data_dir;  // "" = the model's folder
  // Accept ops ONNX does not define (for inspecting); shape inference is then lenient.
  bool allow_unknown_ops = false;
  // For the Vulkan builder, which needs static shapes: input dimensions that are
  // dynamic after input_shapes become 1, with a warning naming the shape (the
  // shape the data loader generates inputs of), as Polygraphy does for TensorRT.
  bool static_input_shapes = false;
};

struct FoldOptions {
  bool shape_inference = true;  // re-infer shapes after each folding round
  int64_t size_threshold = -1;  // do not fold nodes whose outputs exceed this many bytes (-1: no limit)
  int max_rounds = -1;          // folding rounds at most (-1: until nothing changes)
};

// An owned ModelProto with the path it was read from (for external data and messages).
struct OnnxModel {
  std::shared_ptr<onnx::ModelProto> proto;
  std::string path;  // "" when made in memory
};

// The op versions among the model's nodes whose shape rule is vkgraphy's, with their node
// counts ("ReduceMean-18 x4, Split-18"); "" when ONNX's rules cover every node.
std::string vkgraphy_shape_rules_used(const OnnxModel& model);

// What loading does with nodes that share a name with an earlier node of their graph.
enum class NodeNames {
  MakeUnique,  // renamed "<name>_2", "<name>_3", ... in graph order, with one warning
  AsInFile     // kept (check lint reports them)
};

// Reads and parses a model file. External data is loaded from `external_data_dir`
// ("" = the model's folder). Throws Error for a missing, unreadable, truncated or
// non-ONNX file, or missing external data. Nodes that share a name with an earlier node
// of their graph (ONNX's checker allows it) are renamed (NodeNames::MakeUnique), so that
// every node can be addressed by name.
OnnxModel load_onnx_model(const std::string& path, bool load_external_data = true,
                          const std::string& external_data_dir = "", NodeNames names = NodeNames::MakeUnique);
// The same for a model held in memory (the bytes of a model file). `source` names it in messages
// and is the OnnxModel's path ("" for none); external data is read from `external_data_dir`
// ("": the folder of `source`, else the working directory).
OnnxModel parse_onnx_model(const std::string& bytes, const std::string& source, bool load_external_data = true,
                           const std::string& external_data_dir = "", NodeNames names = NodeNames::MakeUnique);

// The graph inputs a caller feeds: declared inputs that no initializer gives a value.
std::vector<std::string> runtime_input_names(const OnnxModel& model);

// A deep copy (import modifies a model in place).
OnnxModel copy_onnx_model(const OnnxModel& model);

// Turns the named graph inputs into initializers holding the given values.
void freeze_inputs(OnnxModel& model, const std::map<std::string, Tensor>& values);

// Version of the default ONNX domain the model imports (0 if none).
int64_t default_opset(const OnnxModel& model);

// Checks the structure that every later stage relies on, and every node of a known op
// against its ONNX schema; throws Error naming the problems found (graph name, opset
// imports, duplicate names, undefined tensors, outputs, invalid nodes). Returns the
// nodes whose op ONNX does not define ("Op 'name'"), which only some callers accept.
std::vector<std::string> validate_onnx_model(const OnnxModel& model);

// What override_input_shapes does with a fixed dimension the given shape changes.
enum class FixedDimensions {
  Keep,     // an error naming the input and the dimension (--input-shapes: shapes fill in dynamic dimensions)
  Override  // changed, with a warning (surgeon sanitize --override-input-shapes, as Polygraphy does)
};

// Replaces declared input shapes (the whole shape, or only the dynamic dimensions).
void override_input_shapes(OnnxModel& model, const InputShapes& shapes,
                           FixedDimensions fixed = FixedDimensions::Keep);

// Sets every dynamic dimension of the graph inputs (initializers aside) to 1, with a
// warning per input naming the shape the model now has (ImportOptions::static_input_shapes).
void fix_dynamic_input_dims(OnnxModel& model);

// ONNX shape inference with data propagation. It ignores the shapes the model already
// records (exported models often carry stale or contradictory ones, which strict
// inference would refuse): it infers on a sorted copy without them, then takes its
// value_info; recorded entries inference could not find stay, declared graph outputs
// stay and only get missing types and shapes filled in. Strict: inference errors are
// one-line Errors naming the node; lenient: they are warnings and shapes stay as they
// were. Works on IR versions the 1.12 checker refuses.
void infer_shapes(OnnxModel& model, bool strict = true);

// Forgets inferred shapes (value_info and the shapes of graph outputs; dtypes stay),
// so that shape inference can run after input shapes changed.
void clear_inferred_shapes(OnnxModel& model);

// Folds nodes whose inputs are all constant, and Shape/Size of statically shaped
// tensors, into initializers (evaluated by the reference backend); repeats shape
// inference until nothing changes. Returns the number of nodes folded.
size_t fold_constants(OnnxModel& model, const FoldOptions& options = {});

// Drops initializers no node or output uses (and inputs that only gave them defaults).
void remove_unused_initializers(OnnxModel& model);

// Sorts nodes topologically in place; throws Error on a cycle.
void toposort(OnnxModel& model);

// The whole pipeline: load, validate, override shapes, infer, fold, sort, convert.
Graph import_onnx(const std::string& path, const ImportOptions& options = {});
// Pipeline on an already loaded model (it is modified in place).
Graph import_onnx(OnnxModel& model, const ImportOptions& options = {});
// Converts a (validated, sorted) model into the IR without further processing.
Graph to_graph(const OnnxModel& model);
Node node_from_proto(const onnx::NodeProto& proto);

// ValueInfo <-> ValueInfoProto's tensor type: dtype unset when unknown or not a
// tensor type; a Dim without value keeps its dim_param.
ValueInfo value_info_from_proto(const onnx::ValueInfoProto& vi);
void dims_to_proto(const std::vector<Dim>& dims, onnx::TensorShapeProto* shape);

// Tensor <-> TensorProto (raw_data; external data must already be loaded).
Tensor tensor_from_proto(const onnx::TensorProto& proto);
void tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto);

// Writes a model whole or not at all (temporary file + rename); throws Error on failure.
void save_onnx_model(const OnnxModel& model, const std::string& path);

}  // namespace vkg
