"""Flag compatibility with the installed Polygraphy: every flag of `polygraphy <tool> --help`
exists in `vkgraphy <tool> --help` (or among vkgraphy's global options), or a rule of the table
"Polygraphy's flags" in docs/cli.md names it with the reason vkgraphy does not take it. A rule
that matches nothing fails too, so the table cannot go stale."""
import fnmatch
import os
import re
import subprocess
import sys
import unittest

from vkgraphy_cli import BIN, SOURCE_DIR, VENV

POLYGRAPHY = os.path.join(VENV, "bin", "polygraphy")
TOOLS = ["run", "convert", "inspect model", "inspect data", "debug build", "debug precision", "debug reduce",
         "debug repeat"]


def help_flags(cmd):
    """The long flags declared by a --help text (argparse or CLI11): option lines only, not descriptions."""
    proc = subprocess.run([*cmd, "--help"], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} --help failed:\n{proc.stdout}{proc.stderr}")
    found = set()
    for line in proc.stdout.splitlines():
        text = line.strip()
        if text.startswith("-"):
            found.update(re.findall(r"(?<![\w-])--[a-z0-9][a-z0-9-]*", re.split(r"\s{2,}", text)[0]))
    return found


def documented_rules():
    """[(globs, tools or None for all, reason)] from the marked table of docs/cli.md."""
    with open(os.path.join(SOURCE_DIR, "docs", "cli.md")) as f:
        text = f.read()
    table = text.split("<!-- polygraphy-flags:begin -->")[1].split("<!-- polygraphy-flags:end -->")[0]
    rules = []
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        globs = re.findall(r"`(--[^`]+)`", cells[0])
        tools = None if cells[1] == "all" else [t.strip() for t in cells[1].split(",")]
        rules.append((globs, tools, cells[2]))
    return rules


class TestPolygraphyFlags(unittest.TestCase):
    def test_every_polygraphy_flag_exists_or_is_documented(self):
        if not os.access(POLYGRAPHY, os.X_OK):
            raise AssertionError(f"{POLYGRAPHY} is missing: run ./setup.sh to create the test virtual environment")
        rules = documented_rules()
        used = set()
        global_flags = help_flags([BIN])
        undocumented = {}
        for tool in TOOLS:
            pg = help_flags([POLYGRAPHY, *tool.split()])
            vk = help_flags([BIN, *tool.split()]) | global_flags
            same = pg & vk
            documented, missing = set(), []
            for flag in sorted(pg - vk):
                hits = [(i, g) for i, (globs, tools, _) in enumerate(rules) if tools is None or tool in tools
                        for g in globs if fnmatch.fnmatchcase(flag, g)]
                if hits:
                    documented.add(flag)
                    used.update(hits)
                else:
                    missing.append(flag)
            print(f"FLAGS tool={tool.replace(' ', '-')} polygraphy={len(pg)} same={len(same)} "
                  f"documented={len(documented)} undocumented={len(missing)}", file=sys.stderr)
            if missing:
                undocumented[tool] = missing
        self.assertEqual(undocumented, {}, "Polygraphy flags that vkgraphy neither takes nor documents in docs/cli.md")
        stale = [g for i, (globs, _, _) in enumerate(rules) for g in globs if (i, g) not in used]
        self.assertEqual(stale, [], "rules of docs/cli.md's Polygraphy table that match no flag")


if __name__ == "__main__":
    unittest.main()
