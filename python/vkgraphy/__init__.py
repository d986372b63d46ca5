"""vkgraphy from Python: Vulkan engines built by timing tactics on the device, the CPU reference
backend, the data loader and the comparator of `vkgraphy run`, and Polygraphy's data files.

    import vkgraphy
    engine = vkgraphy.build_engine("model.onnx", fp16=True, input_shapes={"x": (1, 3, 224, 224)})
    outputs = engine.infer({"x": x})

Options are the command line's, as keyword arguments (docs/python.md). For Polygraphy:
vkgraphy.runner.VkgraphyRunner, and `polygraphy run MODEL --vkgraphy` once the package is installed.
"""
from vkgraphy._vkgraphy import (
    CompareResult,
    Engine,
    Error,
    ReferenceBackend,
    __version__,
    build_engine,
    compare,
    devices,
    generate_inputs,
    get_log_level,
    load_engine,
    load_inputs,
    load_outputs,
    save_inputs,
    save_outputs,
    set_log_level,
)

__all__ = [
    "CompareResult",
    "Engine",
    "Error",
    "ReferenceBackend",
    "__version__",
    "build_engine",
    "compare",
    "devices",
    "generate_inputs",
    "get_log_level",
    "load_engine",
    "load_inputs",
    "load_outputs",
    "save_inputs",
    "save_outputs",
    "set_log_level",
]
