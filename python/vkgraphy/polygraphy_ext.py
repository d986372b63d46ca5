"""`polygraphy run MODEL --vkgraphy`: vkgraphy as a runner of the real Polygraphy.

Installed with the package, this module is found through the `polygraphy.run.plugins` entry
point. It adds the `--vkgraphy` runner and vkgraphy's device and builder options under the
`--vkgraphy-` prefix (`--vkgraphy-fp16`, `--vkgraphy-device`, `--vkgraphy-layer-precisions`,
...: the command line's options of `vkgraphy convert`, generated from them). Polygraphy's own
options apply as for any runner: `--input-shapes` fix the engine's shapes, `--onnx-outputs`
and the other ONNX loader options shape the model the engine is built from, `--gen-script`
writes the equivalent Python.
"""
import re

from polygraphy.tools.args import util as args_util
from polygraphy.tools.args.backend.onnx.loader import OnnxLoadArgs
from polygraphy.tools.args.base import BaseArgs, BaseRunnerArgs
from polygraphy.tools.args.model import ModelArgs
from polygraphy.tools.script import make_invocable

from vkgraphy import _vkgraphy

PREFIX = "vkgraphy-"


def _option_dest(name):
    return "vkgraphy_" + name.replace("-", "_")


class VkgraphyBuildArgs(BaseArgs):
    """
    vkgraphy Engine Building: the Vulkan device and the engine builder of the `--vkgraphy` runner.

    Depends on:

        - ModelArgs
        - OnnxLoadArgs
    """

    def add_parser_args_impl(self):
        self._options = _vkgraphy._builder_options()
        names = "|".join(re.escape(name) for name, _, _, _ in self._options)
        for name, help_text, switch, many in self._options:
            flag = "--" + PREFIX + name
            help_text = help_text.replace("%", "%%")  # argparse formats help with %
            help_text = re.sub(r"--(" + names + r")\b", "--" + PREFIX + r"\1", help_text)
            if switch:
                self.group.add_argument(flag, help=help_text, action="store_true", default=None, dest=_option_dest(name))
            else:
                self.group.add_argument(flag, help=help_text, nargs="+" if many else None, default=None,
                                        dest=_option_dest(name))
        self.group.add_argument(
            "--" + PREFIX + "save-engine", help="Save the vkgraphy engine to this path", default=None,
            dest="vkgraphy_save_engine")

    def parse_impl(self, args):
        """
        Attributes:
            options (Dict[str, object]): build_engine()'s keyword arguments from the `--vkgraphy-*` options given.
            save_engine (str): Where to save the engine, or None.
        """
        self.options = {}
        for name, _, _, _ in self._options:
            value = args_util.get(args, _option_dest(name))
            if value is not None:
                self.options[name.replace("-", "_")] = value
        self.save_engine = args_util.get(args, "vkgraphy_save_engine")

    def add_to_script_impl(self, script):
        if self.arg_groups[OnnxLoadArgs].must_use_onnx_loader():
            model = self.arg_groups[OnnxLoadArgs].add_to_script(script, serialize_model=True)
        else:
            model = self.arg_groups[ModelArgs].path
        options = dict(self.options)
        shapes = self.arg_groups[ModelArgs].input_shapes
        if shapes and "input_shapes" not in options:
            options["input_shapes"] = {name: tuple(meta.shape) for name, meta in shapes.items()}
        script.add_import(imports=["BuildEngine"], frm="vkgraphy.runner")
        loader = script.add_loader(make_invocable("BuildEngine", model, **options), "build_vkgraphy_engine")
        if self.save_engine:
            script.add_import(imports=["SaveEngine"], frm="vkgraphy.runner")
            loader = script.add_loader(make_invocable("SaveEngine", loader, path=self.save_engine),
                                       "save_vkgraphy_engine")
        return loader


class VkgraphyRunnerArgs(BaseRunnerArgs):
    """
    vkgraphy Inference: running inference with a vkgraphy Vulkan engine.

    Depends on:

        - VkgraphyBuildArgs
    """

    def get_name_opt_impl(self):
        return "vkgraphy", "vkgraphy"

    def get_extra_help_text_impl(self):
        return "vkgraphy builds a Vulkan engine, timing tactics on the device; options: --vkgraphy-*"

    def add_to_script_impl(self, script):
        script.add_import(imports=["VkgraphyRunner"], frm="vkgraphy.runner")
        script.add_runner(make_invocable("VkgraphyRunner", self.arg_groups[VkgraphyBuildArgs].add_to_script(script)))


def export_argument_groups():
    """The `polygraphy.run.plugins` entry point: the argument groups `polygraphy run` adds."""
    return [VkgraphyBuildArgs(), VkgraphyRunnerArgs()]
