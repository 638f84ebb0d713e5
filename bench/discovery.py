#!/usr/bin/env python3
"""What discovery costs and saves at start-up (stdlib only; a release build).

For each document, `ferry serve --stdio --all` with every operation listed, then with
`discovery: true`: seconds to the answer of its first `tools/list`, its peak resident memory
then (VmHWM), and that answer's size in estimated tokens (characters / 4, as `ferry check`
counts). Each is run REPEAT times, alternating; each figure is the range.

  bench/discovery.py [--repeat N] BINARY DOCUMENT...
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale import listing, span  # noqa: E402 - after the path above


def first_list(binary, config):
    """Seconds to the first tools/list answer, peak RSS (MiB) then, and the answer's size in
    estimated tokens."""
    elapsed, _, peak, tools = listing(binary, ["--all", "--config", config], None)
    listed = json.loads(tools)["result"]["tools"]
    return elapsed, peak, len(json.dumps(listed, separators=(",", ":"))) / 4


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("documents", nargs="+")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        for document in args.documents:
            configs = {}
            for mode, extra in [("listed", ""), ("discovery", "discovery: true\n")]:
                configs[mode] = os.path.join(work, f"{mode}.yaml")
                with open(configs[mode], "w") as f:
                    f.write(f"openapi: {json.dumps(os.path.abspath(document))}\n")
                    f.write(f"upstream: http://127.0.0.1:9\n{extra}")
            results = {mode: [] for mode in configs}
            for _ in range(args.repeat):
                for mode, config in configs.items():
                    results[mode].append(first_list(args.binary, config))
            for mode, runs in results.items():
                seconds, peaks, tokens = zip(*runs)
                print(f"{os.path.basename(document)} {mode}: first tools/list "
                      f"{span(seconds, 's', 2)}, peak {span(peaks, 'MiB', 0)}, "
                      f"tools/list {span(tokens, 'tokens', 0)}")


if __name__ == "__main__":
    main()
