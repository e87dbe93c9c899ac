#!/usr/bin/env python3
"""Checks a history of the consistency workload (corevalue-worker consistency-run) against what the
Concurrency article claims, and prints the verdict with the counts of operations and anomalies.

usage: scripts/consistency/check.py [--min-ok N] [--label NAME] HISTORY...

Exit status: 0 when no anomaly was found and at least N operations (and one of each kind) were
acknowledged, 1 otherwise, 2 for a history that cannot be read. Python 3's standard library only.

What is checked, and why each is claimed (the Concurrency article, "What is promised, and how it is checked"):
- lists (`append`, `read`): no duplicated, lost, aborted (G1a) or intermediate (G1b) elements; every read a
  prefix of one order; an append commits after exactly the list it read (persistent structs are
  version-checked); a read sees every append acknowledged before it began;
- unique registers (`uwrite`, `uread`): no torn rows, no aborted reads, last writer wins in realtime;
- persistent registers (`incr`, `pread`): the same, and no lost update: committed increments form one chain;
- no cycle in the dependency graph (G0, G1c, G2), nor one through a process's own order: every fetch
  reads one snapshot and every save is one transaction, whose version checks make the read-modify-writes
  of one key serializable, so this workload's histories must be serializable.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from findings import Findings  # noqa: E402
from graph import Graph, check_cycles  # noqa: E402
from history import FAIL, INFO, OK, HistoryError, counts, load  # noqa: E402
from lists import check_lists  # noqa: E402
from registers import check_persistent_registers, check_unique_registers  # noqa: E402

KINDS = ("append", "read", "uwrite", "uread", "incr", "pread")


def process_order(operations, graph):
    """po edges: each process's committed operations in the order it ran them (one at a time). Only from an
    acknowledged one: an operation of unknown outcome that committed may have committed after the process
    went on."""
    by_process = {}
    for op in operations:
        if op in graph.nodes:
            by_process.setdefault(op.process, []).append(op)
    for ops in by_process.values():
        ops.sort(key=lambda op: op.invoked)
        acknowledged = None
        for op in ops:
            if acknowledged is not None:
                graph.add_edge(acknowledged, op, "po")
            if op.type == OK:
                acknowledged = op


def check(operations):
    """The findings of every check on `operations`."""
    findings = Findings()
    graph = Graph()
    for op in operations:
        if op.type == OK:
            graph.add_node(op)
    check_lists(operations, findings, graph)
    check_unique_registers(operations, findings)
    check_persistent_registers(operations, findings, graph)
    process_order(operations, graph)
    check_cycles(graph, findings)
    edges = {}
    for targets in graph.edges.values():
        for labels in targets.values():
            for label in labels:
                edges[label] = edges.get(label, 0) + 1
    findings.graph = f"{len(graph.nodes)} operations, edges " + ", ".join(f"{k} {v}" for k, v in sorted(edges.items()))
    return findings


def report(label, operations, findings, minimum):
    """Prints the verdict; returns the exit status."""
    total, by_kind = counts(operations)
    retried = [op.retries for op in operations if op.retries]
    print(f"{label}: {len(operations)} operations: ok {total[OK]}, failed {total[FAIL]}, unknown {total[INFO]}; "
          f"{len(retried)} ran a transaction again ({sum(retried)} retries in the store)")
    for kind in KINDS:
        row = by_kind.get(kind, {OK: 0, FAIL: 0, INFO: 0})
        print(f"{label}:   {kind:<7} ok {row[OK]:>5}  failed {row[FAIL]:>5}  unknown {row[INFO]:>4}")
    print(f"{label}: dependency graph: {findings.graph}")
    print(f"{label}: anomalies {findings.total()}"
          + "".join(f", {kind} {count}" for kind, count in sorted(findings.count.items())))
    for kind, examples in sorted(findings.examples.items()):
        for example in examples:
            print(f"{label}:   {kind}: {example}")
    status = 0 if findings.total() == 0 else 1
    missing = [kind for kind in KINDS if by_kind.get(kind, {}).get(OK, 0) == 0]
    if total[OK] < minimum or missing:
        print(f"{label}: too little was checked: {total[OK]} operations acknowledged ({minimum} wanted)"
              + (f", none of {', '.join(missing)}" if missing else ""))
        status = 1
    summary = {"label": label, "ok": total[OK], "failed": total[FAIL], "unknown": total[INFO], "retried": len(retried),
               "anomalies": findings.count, "verdict": "pass" if status == 0 else "FAIL"}
    print(f"{label}: verdict {summary['verdict']} {json.dumps(summary, sort_keys=True)}")
    return status


def main(arguments):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min-ok", type=int, default=1, help="acknowledged operations wanted at least")
    parser.add_argument("--label", default="consistency", help="the name that prefixes each line")
    parser.add_argument("histories", nargs="+")
    options = parser.parse_args(arguments)
    try:
        operations = load(options.histories)
    except (HistoryError, OSError, KeyError, ValueError) as error:
        print(f"{options.label}: cannot read the history: {error}")
        return 2
    return report(options.label, operations, check(operations), options.min_ok)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
