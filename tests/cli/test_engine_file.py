"""Engine files: `vkgraphy convert` writes them, `vkgraphy inspect model` shows them,
and a truncated or corrupt one is one clear error.

Run by ctest with VKGRAPHY_BIN (the vkgraphy binary) and VKGRAPHY_SOURCE_DIR set.
Builds use optimization level 0 (no timing), so the output does not depend on
measured times.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vkgraphy_cli import CliTestCase, model  # noqa: E402

EXIT_INVALID_INPUT = 3


class EngineFileTest(CliTestCase):
    def convert(self, model_name, engine_name="model.engine", *extra):
        path = self.path(engine_name)
        self.vkgraphy("convert", model(model_name), "-o", path, "--builder-optimization-level", "0", *extra)
        return path

    def assert_clear_error(self, *args):
        """Exit code 3 with one error line (no continuation lines, no internal error)."""
        out = self.vkgraphy(*args, expect=EXIT_INVALID_INPUT)
        lines = out.rstrip("\n").split("\n")
        errors = [line for line in lines if line.startswith("[E]")]
        self.assertEqual(len(errors), 1, f"{args}: expected one error line:\n{out}")
        after = lines[lines.index(errors[0]) + 1:]
        self.assertTrue(all(not line.startswith(" ") for line in after), f"{args}: multi-line error:\n{out}")
        self.assertNotIn("[!]", out)
        return errors[0]

    def write_bytes(self, name, data):
        path = self.path(name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def read_bytes(self, path):
        with open(path, "rb") as f:
            return f.read()

    def test_file_starts_with_magic_and_version(self):
        data = self.read_bytes(self.convert("identity.onnx"))
        self.assertEqual(data[:8], b"VKGENGN\0")
        version, flags, metadata_length = struct.unpack_from("<IIQ", data, 8)
        self.assertEqual((version, flags), (3, 0))  # format 3: tensor views (eliminated Concats)
        (blob_length,) = struct.unpack_from("<Q", data, 24 + metadata_length)
        self.assertEqual(len(data), 24 + metadata_length + 8 + blob_length + 8)

    def test_inspect_summary(self):
        engine = self.convert("conv.onnx")
        out = self.vkgraphy("inspect", "model", engine)
        self.assertIn("==== vkgraphy Engine ====", out)
        self.assertIn("| Engine format version: 3 | vkgraphy version: ", out)
        self.assertIn("Built on: ", out)
        self.assertIn("---- 1 Engine Input(s) ----\n    {a [dtype=float32, shape=(1, 16, 8, 8), storage=f32]}", out)
        self.assertIn("---- 1 Engine Output(s) ----\n    {conv_out_0 [dtype=float32, shape=(1, 4, 5, 5), storage=f32]}",
                      out)
        self.assertIn("---- Memory ----\n    Memory slots: ", out)
        self.assertIn("Weight memory: ", out)
        self.assertIn("---- 1 Layer(s) ----\n    Layer 0    | conv [Op: Conv] | Tactic: conv.", out)
        self.assertIn("| Precision: fp32 |", out)
        self.assertIn(" -> {conv_out_0 [dtype=float32, shape=(1, 4, 5, 5), storage=f32]}", out)
        self.assertNotIn("Dispatch 0", out)
        self.assertNotIn("OpEntryPoint", out)

    def test_inspect_two_layers(self):
        # Without fusion both Identity nodes are layers; with it, the first is removed (a no-op whose output
        # only feeds the second) and the second, which writes the model output, stays.
        out = self.vkgraphy("inspect", "model", self.convert("identity_identity.onnx", "m.engine", "--no-fusion"))
        self.assertIn("---- 2 Layer(s) ----", out)
        self.assertIn("Layer 0    |", out)
        self.assertIn("Layer 1    |", out)
        out = self.vkgraphy("inspect", "model", self.convert("identity_identity.onnx"))
        self.assertIn("---- 1 Layer(s) ----", out)
        self.assertIn("Layer 0    | onnx_graphsurgeon_node_3 [Op: Identity]", out)

    def test_show_layers_and_weights(self):
        engine = self.convert("conv.onnx")
        out = self.vkgraphy("inspect", "model", engine, "--show", "layers", "weights")
        self.assertIn("Dispatch 0 | conv/", out)
        self.assertIn("| Groups: (", out)
        self.assertIn("Spec constants: {0: ", out)
        self.assertIn("Push constants: [", out)
        self.assertIn("Bindings: [", out)
        self.assertIn("input 0 (a)", out)
        self.assertIn("output 0 (conv_out_0)", out)
        self.assertIn("Weight(s), ", out)
        self.assertIn("conv weight 0 [dtype=float32, shape=(", out)

    def test_show_spirv(self):
        engine = self.convert("conv.onnx")
        out = self.vkgraphy("inspect", "model", engine, "--show", "spirv")
        self.assertIn("Shader(s) ----", out)
        self.assertIn("Shader: conv/", out)
        self.assertIn("OpEntryPoint GLCompute %main \"main\"", out)
        self.assertIn("OpFunctionEnd", out)

    def test_model_type(self):
        engine = self.convert("identity.onnx")
        out = self.vkgraphy("inspect", "model", engine, "--model-type", "engine")
        self.assertIn("==== vkgraphy Engine ====", out)
        error = self.assert_clear_error("inspect", "model", model("identity.onnx"), "--model-type", "engine")
        self.assertIn("not a vkgraphy engine", error)

    def test_truncated_engine(self):
        data = self.read_bytes(self.convert("conv.onnx"))
        for cut in (len(data) // 2, len(data) - 1, 20):
            path = self.write_bytes("cut.engine", data[:cut])
            error = self.assert_clear_error("inspect", "model", path)
            self.assertIn(f"'{path}': truncated engine file ({cut} bytes)", error)

    def test_corrupt_byte_fails_the_checksum(self):
        data = bytearray(self.read_bytes(self.convert("conv.onnx")))
        data[len(data) // 2] ^= 0x5A
        path = self.write_bytes("corrupt.engine", bytes(data))
        error = self.assert_clear_error("inspect", "model", path)
        self.assertIn("checksum mismatch", error)

    def test_other_format_version(self):
        data = bytearray(self.read_bytes(self.convert("identity.onnx")))
        struct.pack_into("<I", data, 8, 99)
        path = self.write_bytes("future.engine", bytes(data))
        error = self.assert_clear_error("inspect", "model", path)
        self.assertIn("engine format version 99, but this vkgraphy", error)
        self.assertIn("reads versions 1 to 3; rebuild the engine", error)


if __name__ == "__main__":
    import unittest

    unittest.main()
