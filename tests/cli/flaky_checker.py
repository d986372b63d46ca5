"""A --check command for the debug-tool tests whose result follows a script.

    flaky_checker.py --state FILE --pattern ppf [--code N] [--iter-info PATH] [--print TEXT]

Each run reads its run number from FILE (starting at 0), bumps it, and
passes or fails as the run-th letter of --pattern says ('p' or 'f', cycling).
A failing run exits with --code (default 1) and prints "CHECK FAILED".
With --iter-info the letter is chosen by the 'iteration' of that JSON file
instead of the run number, and the file's contents are printed.
"""
import argparse
import json
import os
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--state", required=True)
    parser.add_argument("--pattern", required=True)
    parser.add_argument("--code", type=int, default=1)
    parser.add_argument("--iter-info")
    args = parser.parse_args()

    run = 0
    if os.path.exists(args.state):
        with open(args.state) as f:
            run = int(f.read() or 0)
    with open(args.state, "w") as f:
        f.write(str(run + 1))

    index = run
    if args.iter_info:
        with open(args.iter_info) as f:
            info = json.load(f)
        print("ITER INFO", json.dumps(info))
        index = info["iteration"]
    if args.pattern[index % len(args.pattern)] == "p":
        print("check passed")
        return 0
    print("CHECK FAILED")
    return args.code


if __name__ == "__main__":
    sys.exit(main())
