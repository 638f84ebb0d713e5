#!/usr/bin/env python3
"""Start-up cost of ferry over large documents (stdlib only; a release build).

For each document: `ferry serve --stdio --all` from start to the answer of its first
`tools/list` (wall clock, as a client sees it; and the CPU time it had used by then, which
a busy machine disturbs less: "serve-cpu") and its peak resident memory then (VmHWM:
"serve"); the cost of only reading the document ("read": `ferry serve` with one operation
chosen, to its first `tools/list`); `ferry tools --all` ("tools") and, with --check, `ferry
check --all --format json` ("check"), time and peak memory. A --check-doc document is
measured by `check` and by serving 10 of its operations ("ten") alone. Documents are JSON.
Each binary given is measured in turn, REPEAT times over, so that old and new builds share
the machine's moods; each figure is the range over the repeats. The binaries are told apart
by their directory's name.

With --apis COUNT, it measures instead COUNT APIs of 1,000 synthetic operations each behind
one server (`apis:`, each API's document a file of its own) against one API of COUNT × 1,000
synthetic operations: `serve --stdio --all` to its first `tools/list`, wall clock, CPU and
peak memory, the median over the repeats, and checks the target (the APIs within 1.2 times
the time and memory of the one API; exit status 1 when missed).

  bench/scale.py [--repeat N] [--synthetic 10,100,1000,5000] [--doc FILE]...
                 [--check-doc FILE]... BINARY...
  bench/scale.py --apis 3 [--repeat N] BINARY...

Synthetic documents come from ../shared/bench/gen-openapi.py (beside the checkout), or
FERRY_GEN_OPENAPI.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GENERATOR = os.environ.get(
    "FERRY_GEN_OPENAPI",
    os.path.join(ROOT, "..", "shared", "bench", "gen-openapi.py"),
)
# --apis: the most the APIs may cost, in time and memory, against the one API.
APIS_TARGET = 1.2


def peak_of(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_of(pid):
    """CPU seconds (user and system) the process has used so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def listing(binary, args, cwd):
    """Seconds from spawning `ferry serve --stdio ARGS` to its first tools/list answer, the
    CPU seconds it used by then, its peak RSS (MiB) then, and the answer's line."""
    started = time.monotonic()
    ferry = subprocess.Popen(
        [binary, "serve", "--stdio", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
    )
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "scale", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    for message in messages:
        ferry.stdin.write((json.dumps(message) + "\n").encode())
    ferry.stdin.flush()
    answer = b""
    for line in ferry.stdout:
        if b'"id":2' in line[:40]:
            answer = line
            break
    elapsed = time.monotonic() - started
    peak = peak_of(ferry.pid)
    cpu = cpu_of(ferry.pid)
    ferry.stdin.close()
    ferry.wait()
    if not answer:
        sys.exit(f"{binary} serve {' '.join(args)}: no tools/list answer")
    return elapsed, cpu, peak, answer


def first_list(binary, args, cwd, tools=None):
    """[`listing`] without the answer; with `tools`, the answer must list that many tools."""
    elapsed, cpu, peak, answer = listing(binary, args, cwd)
    if tools is not None:
        listed = len(json.loads(answer)["result"]["tools"])
        if listed != tools:
            sys.exit(f"{binary} serve {' '.join(args)}: {listed} tools listed, not {tools}")
    return elapsed, cpu, peak


def run_peak(binary, args, cwd):
    """Seconds and peak RSS (MiB) of `ferry ARGS` run to its end, output discarded."""
    started = time.monotonic()
    ferry = subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, cwd=cwd)
    _, _, usage = os.wait4(ferry.pid, 0)
    return time.monotonic() - started, usage.ru_maxrss / 1024


def operation_ids(path, count):
    """The first `count` distinct operationIds of the document at `path`."""
    with open(path) as f:
        document = json.load(f)
    ids = []
    for item in document["paths"].values():
        for method, operation in item.items():
            if method in ("get", "put", "post", "delete", "patch") and "operationId" in operation:
                if operation["operationId"] not in ids:
                    ids.append(operation["operationId"])
                if len(ids) == count:
                    return ids
    if not ids:
        sys.exit(f"{path}: no operation with an operationId")
    return ids


def curation_choosing(work, path, count):
    """A curation file choosing the first `count` operations of `path`."""
    curation = os.path.join(work, f"chosen-{count}.yaml")
    with open(curation, "w") as f:
        f.write(f"openapi: {json.dumps(path)}\nupstream: http://127.0.0.1:9\ntools:\n")
        for operation_id in operation_ids(path, count):
            f.write(f"  {json.dumps(operation_id)}: {{}}\n")
    return curation


def span(values, unit, digits):
    low, high = min(values), max(values)
    if f"{low:.{digits}f}" == f"{high:.{digits}f}":
        return f"{low:.{digits}f} {unit}"
    return f"{low:.{digits}f}–{high:.{digits}f} {unit}"


def report(results, label, binaries):
    for binary in binaries:
        row = results[(label, binary)]
        cells = []
        for key in row:
            unit = key.split()[1]
            cells.append(f"{key.split()[0]} {span(row[key], unit, 2 if unit == 's' else 0)}")
        print(f"{label:>16}  {os.path.basename(os.path.dirname(binary))}:  "
              + "; ".join(cells), flush=True)


def apis_against_one(binaries, count, repeat, work):
    """`count` APIs of 1,000 synthetic operations against one API of `count` × 1,000: the
    medians of `serve --all` to the first tools/list, and whether the target holds for every
    binary."""
    single = os.path.join(work, "synthetic-1000.json")
    subprocess.run([sys.executable, GENERATOR, "1000", "-o", single], check=True)
    with open(single) as f:
        text = f.read()
    curation = os.path.join(work, "apis.yaml")
    with open(curation, "w") as f:
        f.write("apis:\n")
        for k in range(count):
            # A file each, read as a document of its own (the same operations, named apart
            # by each API's id).
            path = os.path.join(work, f"api{k}.json")
            with open(path, "w") as document:
                document.write(text)
            f.write(f"  api{k}: {{openapi: {json.dumps(path)}, upstream: http://127.0.0.1:9}}\n")
    total = count * 1000
    one = os.path.join(work, f"synthetic-{total}.json")
    subprocess.run([sys.executable, GENERATOR, str(total), "-o", one], check=True)
    cases = [
        (f"{count} × 1,000 (apis:)", ["--all", "--config", curation]),
        (f"{total:,} (one API)", ["--all", "--openapi", one, "--upstream", "http://127.0.0.1:9"]),
    ]
    results = {}
    for round in range(repeat):
        for binary in binaries:
            # Each goes first in every other round, so that neither always meets the machine
            # as the other left it.
            for label, args in cases[round % 2:] + cases[:round % 2]:
                seconds, cpu, peak = first_list(binary, args, work, tools=total)
                row = results.setdefault((label, binary), {})
                row.setdefault("first-list s", []).append(seconds)
                row.setdefault("cpu s", []).append(cpu)
                row.setdefault("peak MiB", []).append(peak)
    met = True
    for binary in binaries:
        name = os.path.basename(os.path.dirname(binary))
        for label, _ in cases:
            row = results[(label, binary)]
            cells = [
                f"{key.split()[0]} {statistics.median(values):.{0 if key.endswith('MiB') else 3}f} "
                f"{key.split()[1]} ({span(values, key.split()[1], 0 if key.endswith('MiB') else 3)})"
                for key, values in row.items()
            ]
            print(f"{label:>20}  {name}:  " + "; ".join(cells), flush=True)
        apis, single_api = (results[(label, binary)] for label, _ in cases)
        ratios = {
            key: statistics.median(apis[key]) / statistics.median(single_api[key]) for key in apis
        }
        print(f"{'ratio':>20}  {name}:  "
              + "; ".join(f"{key.split()[0]} {ratio:.2f}" for key, ratio in ratios.items()))
        missed = [key.split()[0] for key in ("first-list s", "peak MiB") if ratios[key] > APIS_TARGET]
        if missed:
            met = False
            print(f"target missed ({name}): {', '.join(missed)} above {APIS_TARGET} times one API's")
        else:
            print(f"target met ({name}): time and memory within {APIS_TARGET} times one API's")
    return met


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binaries", nargs="+")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--synthetic", default="10,100,1000,5000")
    parser.add_argument("--doc", action="append", default=[],
                        help="also measure this document as the synthetic ones")
    parser.add_argument("--check-doc", action="append", default=[],
                        help="measure only `check --all` and serving 10 chosen operations")
    parser.add_argument("--check", action="store_true",
                        help="also time `ferry check --all --format json`")
    parser.add_argument("--serve-only", action="store_true",
                        help="only `serve --all` and reading the document")
    parser.add_argument("--apis", type=int, metavar="COUNT",
                        help="instead: COUNT APIs of 1,000 operations against one of COUNT × 1,000")
    options = parser.parse_args()
    options.binaries = [os.path.abspath(binary) for binary in options.binaries]
    work = tempfile.mkdtemp(prefix="ferry-scale-")
    if options.apis:
        met = apis_against_one(options.binaries, options.apis, options.repeat, work)
        remove(work)
        sys.exit(0 if met else 1)
    documents = []
    for n in filter(None, options.synthetic.split(",")):
        path = os.path.join(work, f"synthetic-{n}.json")
        subprocess.run([sys.executable, GENERATOR, n, "-o", path], check=True)
        documents.append((f"{int(n):,} synthetic", path, False))
    documents += [(os.path.basename(path), os.path.abspath(path), False) for path in options.doc]
    documents += [(os.path.basename(path) + " (check)", os.path.abspath(path), True)
                  for path in options.check_doc]

    results = {}
    for label, path, checked_only in documents:
        every = ["--all", "--openapi", path, "--upstream", "http://127.0.0.1:9"]
        if checked_only:
            ten = curation_choosing(work, path, 10)
            for _ in range(options.repeat):
                for binary in options.binaries:
                    row = results.setdefault((label, binary), {})
                    seconds, peak = run_peak(binary, ["check", "--format", "json", *every], work)
                    row.setdefault("check s", []).append(seconds)
                    row.setdefault("check MiB", []).append(peak)
                    seconds, _, peak = first_list(binary, ["--config", ten], work)
                    row.setdefault("ten s", []).append(seconds)
                    row.setdefault("ten MiB", []).append(peak)
            report(results, label, options.binaries)
            continue
        curation = curation_choosing(work, path, 1)
        for _ in range(options.repeat):
            for binary in options.binaries:
                row = results.setdefault((label, binary), {})
                seconds, cpu, peak = first_list(binary, every, work)
                row.setdefault("serve s", []).append(seconds)
                row.setdefault("serve-cpu s", []).append(cpu)
                row.setdefault("serve MiB", []).append(peak)
                seconds, _, peak = first_list(binary, ["--config", curation], work)
                row.setdefault("read s", []).append(seconds)
                row.setdefault("read MiB", []).append(peak)
                if not options.serve_only:
                    seconds, peak = run_peak(binary, ["tools", *every], work)
                    row.setdefault("tools s", []).append(seconds)
                    row.setdefault("tools MiB", []).append(peak)
                if options.check:
                    seconds, peak = run_peak(binary, ["check", "--format", "json", *every], work)
                    row.setdefault("check s", []).append(seconds)
                    row.setdefault("check MiB", []).append(peak)
        report(results, label, options.binaries)
    remove(work)


def remove(work):
    for name in os.listdir(work):
        os.remove(os.path.join(work, name))
    os.rmdir(work)


if __name__ == "__main__":
    main()
