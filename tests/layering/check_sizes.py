#!/usr/bin/env python3
"""The house's size rules (docs/README.md, "Design"): no C++ file over 800 lines and no function
over 80 lines in the library, the debug tools, the command line and the Python module.

    check_sizes.py SOURCE_DIR   (ctest: sizes)

A function's length runs from the line of its body's opening brace to its closing brace, lambdas
and local classes inside it included. The scan strips comments and literals and tracks braces; a
brace opens a function body where it follows a parenthesized list (a definition's parameters, a
constructor's initializers) at namespace or class scope. It reads a handful of files a second,
where clang-tidy's readability-function-size would parse every translation unit (minutes on CI's
two cores).
"""
import pathlib
import re
import sys

FOLDERS = ("runtime", "tools", "debug", "python")
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
NOT_FUNCTIONS = re.compile(r"^\s*(if|for|while|switch|catch|do|else|namespace|class|struct|union|enum|extern)\b"
                           r"|^\s*(template\s*<.*>\s*)?(class|struct|union)\b|=\s*$")
LITERAL = re.compile(r'R"([^(\s]*)\((?:.|\n)*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
COMMENT = re.compile(r"//[^\n]*|/\*(?:.|\n)*?\*/")
DIRECTIVE = re.compile(r"^[ \t]*#[^\n]*(?:\\\n[^\n]*)*", re.M)  # with its continuation lines


def strip(text):
    """The source with comments, string or character literals and preprocessor directives blanked,
    line breaks kept."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    out, i = [], 0
    token = re.compile(COMMENT.pattern + "|" + LITERAL.pattern)
    for m in token.finditer(text):
        out.append(text[i:m.start()])
        out.append(blank(m))
        i = m.end()
    out.append(text[i:])
    return DIRECTIVE.sub(blank, "".join(out))


def long_functions(text):
    """(first line, lines, head) of each function body longer than the limit."""
    code = strip(text)
    scopes = []  # "function" or "scope", innermost last
    head_start, line = 0, 1
    found = []
    for pos, ch in enumerate(code):
        if ch == "\n":
            line += 1
        elif ch in ";}{":
            if ch == "{":
                head = code[head_start:pos]
                in_function = any(kind == "function" for kind, _, _ in scopes)
                is_function = not in_function and ")" in head and not NOT_FUNCTIONS.search(head.strip())
                scopes.append(("function", line, head) if is_function else ("scope", line, head))
            elif ch == "}" and scopes:
                kind, first, head = scopes.pop()
                if kind == "function" and line - first + 1 > MAX_FUNCTION_LINES:
                    found.append((first, line - first + 1, " ".join(head.split())[-100:]))
            head_start = pos + 1
    return found


def check_scanner():
    """The scan itself: a function one line too long is found, whatever it holds and however it is
    written, and nothing else is."""
    body = "\n".join(["  x += 1;"] * (MAX_FUNCTION_LINES - 2))
    fits = f"int f(int x) {{\n{body}\n}}\n"
    inner = f"  auto g = [&](int y) {{ return y; }};\n  if (x) {{ x = 2; }}\n  const char* s = \"}}\";  // }}\n"
    too_long = f"namespace a {{\nstruct S {{\n  S(int x) : x_(x) {{\n{inner}{body}\n  }}\n  int x_;\n}};\n}}\n"
    table = "const int kTable[] = {\n" + "  1,\n" * 100 + "};\n"
    assert long_functions(fits) == [], "an 80-line function taken for a longer one"
    found = long_functions(too_long)
    assert [n for _, n, _ in found] == [MAX_FUNCTION_LINES + 3], f"the scan found {found} in a sample"
    assert long_functions(table + "#if defined(X)\nnamespace b {\n" + table + "}\n#endif\n") == [], \
        "a table taken for a function"


def main():
    check_scanner()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    problems = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".cpp", ".h") or not path.is_file():
                continue
            text = path.read_text()
            rel = path.relative_to(root)
            lines = text.count("\n")
            if lines > MAX_FILE_LINES:
                problems.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES}): split it by purpose")
            for first, n, head in long_functions(text):
                problems.append(f"{rel}:{first}: a function of {n} lines (at most {MAX_FUNCTION_LINES}): {head}")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} size rule(s) broken (tests/layering/check_sizes.py)")
        return 1
    print(f"sizes: every file in {', '.join(FOLDERS)} within {MAX_FILE_LINES} lines, every function within "
          f"{MAX_FUNCTION_LINES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
