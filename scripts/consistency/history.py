"""Reading a history: the JSON lines of the workload's processes (Sources/corevalue-worker/ConsistencyLog.swift)
paired into operations.

An operation is an `invoke` line and the line that completed it (`ok`, `fail` or `info`). One with no
completion (its process was killed) is `info`: it may or may not have happened, and it may happen at any
time after its invocation, so its completion time is infinite.
"""

import json
import math

OK, FAIL, INFO = "ok", "fail", "info"
WRITES = ("append", "uwrite", "incr")


class HistoryError(Exception):
    """A history the checker cannot read: a malformed line, an operation completed twice."""


class Op:
    """One operation of one process."""

    def __init__(self, line):
        self.process = line["process"]
        self.number = line["op"]
        self.kind = line["kind"]
        self.keys = list(line.get("keys") or [])
        self.invoked = line["time"]
        self.completed = math.inf
        self.type = INFO
        self.append = list(line.get("append") or [])
        self.lists = {}
        self.registers = {}
        self.write = line.get("write")
        self.tag = line.get("tag")
        self.error = None
        self.retries = 0

    @property
    def name(self):
        return f"{self.process}#{self.number}"

    def complete(self, line):
        if line["kind"] != self.kind:
            raise HistoryError(f"{self.name} invoked as {self.kind} and completed as {line['kind']}")
        self.type = line["type"]
        self.completed = line["time"]
        self.lists = line.get("lists") or {}
        self.registers = line.get("registers") or {}
        self.write = line.get("write") or self.write
        self.error = line.get("error")
        self.retries = line.get("retries") or 0

    def __repr__(self):
        return f"{self.name}({self.kind} {','.join(self.keys)} {self.type})"


def parse_lines(lines, source="history"):
    """The operations of a sequence of JSON lines. A torn last line (a process killed inside a write) is
    dropped; a torn line anywhere else is an error."""
    lines = [line for line in lines if line.strip()]
    operations = {}
    for index, text in enumerate(lines):
        try:
            line = json.loads(text)
        except json.JSONDecodeError as error:
            if index == len(lines) - 1:
                continue
            raise HistoryError(f"{source}:{index + 1}: not JSON: {error}") from error
        key = (line["process"], line["op"])
        if line["type"] == "invoke":
            if key in operations:
                raise HistoryError(f"{source}:{index + 1}: {key} invoked twice")
            operations[key] = Op(line)
        elif line["type"] in (OK, FAIL, INFO):
            op = operations.get(key)
            if op is None or op.completed != math.inf:
                raise HistoryError(f"{source}:{index + 1}: {key} completed without one open invocation")
            op.complete(line)
        else:
            raise HistoryError(f"{source}:{index + 1}: unknown type {line['type']!r}")
    return list(operations.values())


def load(paths):
    """The operations of the history files at `paths` (one a process, or several processes a file)."""
    operations = []
    for path in paths:
        with open(path, encoding="utf-8") as file:
            operations += parse_lines(file.read().split("\n"), path)
    return operations


def counts(operations):
    """Operations by outcome, and by kind and outcome."""
    total = {OK: 0, FAIL: 0, INFO: 0}
    by_kind = {}
    for op in operations:
        total[op.type] += 1
        by_kind.setdefault(op.kind, {OK: 0, FAIL: 0, INFO: 0})[op.type] += 1
    return total, by_kind
