"""A Polygraphy runner and loaders for vkgraphy engines.

    from polygraphy.comparator import Comparator
    from polygraphy.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
    from vkgraphy.runner import BuildEngine, VkgraphyRunner

    runners = [VkgraphyRunner(BuildEngine("model.onnx", fp16=True)), OnnxrtRunner(SessionFromOnnx("model.onnx"))]
    results = Comparator.run(runners)
    assert Comparator.compare_accuracy(results)

Loaders are callables, as Polygraphy's are: the runner calls them when it is activated.
"""
import time
from collections import OrderedDict

from polygraphy import util
from polygraphy.backend.base import BaseLoader, BaseRunner
from polygraphy.common import TensorMetadata
from polygraphy.datatype import DataType

import vkgraphy


def _model_bytes_or_path(model):
    model, _ = util.invoke_if_callable(model)
    if hasattr(model, "SerializeToString"):  # an onnx.ModelProto
        return model.SerializeToString()
    return model


class BuildEngine(BaseLoader):
    """Builds a vkgraphy engine from an ONNX model: a path, the model's bytes, an onnx.ModelProto,
    or a loader returning one of those (such as Polygraphy's ModifyOutputs). `options` are
    build_engine()'s keyword arguments (fp16=True, device="llvmpipe", input_shapes={...}, ...)."""

    def __init__(self, model, **options):
        self._model = model
        self._options = options

    def call_impl(self):
        return vkgraphy.build_engine(_model_bytes_or_path(self._model), **self._options)


class LoadEngine(BaseLoader):
    """Loads a vkgraphy engine file (a path or its bytes, or a loader returning one), with
    load_engine()'s device options."""

    def __init__(self, engine, **options):
        self._engine = engine
        self._options = options

    def call_impl(self):
        engine, _ = util.invoke_if_callable(self._engine)
        return vkgraphy.load_engine(engine, **self._options)


class SaveEngine(BaseLoader):
    """Saves the engine another loader gives to `path` and returns it."""

    def __init__(self, engine, path):
        self._engine = engine
        self._path = path

    def call_impl(self):
        engine, _ = util.invoke_if_callable(self._engine)
        engine.save(self._path)
        return engine


class VkgraphyRunner(BaseRunner):
    """Runs inference with a vkgraphy engine, as Polygraphy's runners do.

    `engine` is a vkgraphy.Engine or a loader returning one (BuildEngine, LoadEngine). An engine
    the runner loads itself is closed when it is deactivated; one handed over stays open.
    `inference_time` is the host wall time of the last infer (inputs in, outputs out);
    `device_time` the device's own time for it."""

    def __init__(self, engine, name=None):
        super().__init__(name=name, prefix="vkgraphy-runner")
        self._engine = engine

    @util.check_called_by("activate")
    def activate_impl(self):
        self.engine, self._owns_engine = util.invoke_if_callable(self._engine)

    @util.check_called_by("get_input_metadata")
    def get_input_metadata_impl(self):
        meta = TensorMetadata()
        for name, (dtype, shape) in self.engine.input_metadata.items():
            meta.add(name, dtype=DataType.from_dtype(dtype), shape=list(shape))
        return meta

    @util.check_called_by("infer")
    def infer_impl(self, feed_dict):
        use_torch = any(util.array.is_torch(t) for t in feed_dict.values())
        feed = {name: util.array.to_numpy(t) for name, t in feed_dict.items()}
        start = time.time()
        outputs = self.engine.infer(feed)
        end = time.time()
        self.inference_time = end - start
        self.device_time = self.engine.last_device_time
        out = OrderedDict()
        for name, array in outputs.items():
            out[name] = util.array.to_torch(array) if use_torch else array
        return out

    @util.check_called_by("deactivate")
    def deactivate_impl(self):
        if self._owns_engine:
            self.engine.close()
        del self.engine
