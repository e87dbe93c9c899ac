"""Hand-made histories, each holding one anomaly the checker must find (and a clean one it must pass).

Run: python3 -m unittest discover -s scripts/consistency (scripts/test-faults.sh runs it first).
"""

import io
import json
import os
import sys
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from check import check, report  # noqa: E402
from history import HistoryError, parse_lines  # noqa: E402


class History:
    """Builds the JSON lines of a history: `op` writes an operation's invocation and its completion
    (none when `end` is None: its process was killed)."""

    def __init__(self):
        self.lines = []
        self.numbers = {}

    def op(self, process, kind, keys, start, end, outcome="ok", **fields):
        number = self.numbers[process] = self.numbers.get(process, 0) + 1
        base = {"process": process, "op": number, "kind": kind, "keys": keys}
        invoke = dict(base, type="invoke", time=start)
        for name in ("append", "write", "tag"):
            if name in fields:
                invoke[name] = fields[name]
        self.lines.append(json.dumps(invoke))
        if end is not None:
            self.lines.append(json.dumps(dict(base, type=outcome, time=end, **fields)))
        return self

    def findings(self):
        return check(parse_lines(self.lines))


def reg(tag, n):
    return {"n": n, "a": tag, "b": tag}


class CleanHistoryTests(unittest.TestCase):
    def test_a_clean_history_has_no_anomaly(self):
        h = History()
        h.op("p1", "append", ["k0"], 0, 10, append=["p1-1.1", "p1-1.2"], lists={"k0": []})
        h.op("p2", "append", ["k0"], 5, 15, "fail", append=["p2-1.1"], lists={"k0": []})
        h.op("p2", "append", ["k0"], 20, 30, append=["p2-2.1"], lists={"k0": ["p1-1.1", "p1-1.2"]})
        h.op("p3", "append", ["k0"], 22, None, append=["p3-1.1"])
        h.op("p1", "uwrite", ["u0"], 11, 12, write=reg("p1-2", 7))
        h.op("p2", "incr", ["r0"], 31, 40, registers={"r0": reg("init", 0)}, write=reg("p2-3", 1))
        h.op("p1", "incr", ["r0"], 32, 41, "fail", registers={"r0": reg("init", 0)}, write=reg("p1-3", 1))
        h.op("p1", "uread", ["u0"], 13, 14, registers={"u0": reg("p1-2", 7)})
        h.op("final", "read", ["k0"], 50, 51, lists={"k0": ["p1-1.1", "p1-1.2", "p2-2.1"]})
        h.op("final", "uread", ["u0"], 52, 53, registers={"u0": reg("p1-2", 7)})
        h.op("final", "pread", ["r0"], 54, 55, registers={"r0": reg("p2-3", 1)})
        findings = h.findings()
        self.assertEqual(findings.count, {}, findings.examples)

    def test_an_unknown_append_that_was_read_committed(self):
        h = History()
        h.op("p1", "append", ["k0"], 0, None, append=["p1-1.1"])
        h.op("p2", "append", ["k0"], 5, 8, "info", append=["p2-1.1"], lists={"k0": []})
        h.op("final", "read", ["k0"], 50, 51, lists={"k0": ["p1-1.1"]})
        self.assertEqual(h.findings().count, {})

    def test_a_killed_increment_that_committed_is_placed_by_its_number(self):
        h = History().op("p1", "incr", ["r0"], 0, None, tag="p1-1")
        h.op("p2", "pread", ["r0"], 5, 6, registers={"r0": reg("p1-1", 1)})
        h.op("p2", "incr", ["r0"], 7, 8, registers={"r0": reg("p1-1", 1)}, write=reg("p2-2", 2), tag="p2-2")
        h.op("final", "pread", ["r0"], 10, 11, registers={"r0": reg("p2-2", 2)})
        findings = h.findings()
        self.assertEqual(findings.count, {}, findings.examples)


class AnomalyTestCase(unittest.TestCase):
    def assertFinds(self, history, kind):
        findings = history.findings()
        self.assertIn(kind, findings.kinds(), f"found only {findings.count}")


class ListAnomalyTests(AnomalyTestCase):
    def test_a_lost_acknowledged_append(self):
        h = History().op("p1", "append", ["k0"], 0, 1, append=["a"])
        h.op("final", "read", ["k0"], 5, 6, lists={"k0": []})
        self.assertFinds(h, "lost-append")

    def test_a_duplicated_append(self):
        h = History().op("p1", "append", ["k0"], 0, 1, append=["a"])
        h.op("p2", "read", ["k0"], 5, 6, lists={"k0": ["a", "a"]})
        self.assertFinds(h, "duplicate-append")

    def test_an_aborted_read_g1a(self):
        h = History().op("p1", "append", ["k0"], 0, 1, "fail", append=["a"])
        h.op("p2", "read", ["k0"], 5, 6, lists={"k0": ["a"]})
        self.assertFinds(h, "G1a")

    def test_an_intermediate_read_g1b(self):
        h = History().op("p1", "append", ["k0"], 0, 10, append=["a.1", "a.2"])
        h.op("p2", "read", ["k0"], 5, 6, lists={"k0": ["a.1"]})
        self.assertFinds(h, "G1b")

    def test_reads_in_two_orders(self):
        h = History().op("p1", "append", ["k0"], 0, 10, append=["a"]).op("p2", "append", ["k0"], 0, 10, append=["b"])
        h.op("p3", "read", ["k0"], 11, 12, lists={"k0": ["a", "b"]})
        h.op("p4", "read", ["k0"], 11, 12, lists={"k0": ["b", "a"]})
        self.assertFinds(h, "incompatible-order")

    def test_a_lost_update_of_a_list(self):
        h = History().op("p1", "append", ["k0"], 0, 10, append=["a"], lists={"k0": []})
        h.op("p2", "append", ["k0"], 0, 10, append=["b"], lists={"k0": []})
        h.op("final", "read", ["k0"], 11, 12, lists={"k0": ["a", "b"]})
        self.assertFinds(h, "lost-update")

    def test_a_stale_read(self):
        h = History().op("p1", "append", ["k0"], 0, 1, append=["a"])
        h.op("p2", "read", ["k0"], 5, 6, lists={"k0": []})
        h.op("p3", "read", ["k0"], 7, 8, lists={"k0": ["a"]})
        self.assertFinds(h, "stale-read")

    def test_a_write_cycle_g0(self):
        h = History().op("p1", "append", ["k0", "k1"], 0, 10, append=["a"])
        h.op("p2", "append", ["k0", "k1"], 0, 10, append=["b"])
        h.op("p3", "read", ["k0", "k1"], 11, 12, lists={"k0": ["a", "b"], "k1": ["b", "a"]})
        self.assertFinds(h, "G0")

    def test_circular_information_flow_g1c(self):
        h = History().op("p1", "append", ["k0"], 0, 10, append=["a"], lists={"k1": ["b"]})
        h.op("p2", "append", ["k1"], 0, 10, append=["b"], lists={"k0": ["a"]})
        self.assertFinds(h, "G1c")

    def test_write_skew_g2(self):
        h = History().op("p1", "append", ["k0"], 0, 10, append=["a"], lists={"k1": []})
        h.op("p2", "append", ["k1"], 0, 10, append=["b"], lists={"k0": []})
        h.op("p3", "read", ["k0", "k1"], 11, 12, lists={"k0": ["a"], "k1": ["b"]})
        findings = h.findings()
        self.assertIn("G2", findings.kinds(), findings.count)
        self.assertNotIn("G1c", findings.kinds())

    def test_a_process_that_misses_its_own_write(self):
        h = History().op("p1", "append", ["k0"], 0, 1, append=["a"]).op("p1", "read", ["k0"], 2, 3, lists={"k0": []})
        h.op("p2", "read", ["k0"], 4, 5, lists={"k0": ["a"]})
        self.assertFinds(h, "G-process")


class RegisterAnomalyTests(AnomalyTestCase):
    def test_a_torn_unique_row(self):
        h = History().op("p1", "uwrite", ["u0"], 0, 1, write=reg("p1-1", 7))
        h.op("p2", "uread", ["u0"], 2, 3, registers={"u0": reg("p1-1", 5)})
        self.assertFinds(h, "torn-row")

    def test_a_torn_persistent_row(self):
        h = History().op("p1", "incr", ["r0"], 0, 1, registers={"r0": reg("init", 0)}, write=reg("p1-1", 1))
        h.op("p2", "pread", ["r0"], 2, 3, registers={"r0": {"n": 1, "a": "p1-1", "b": "init"}})
        self.assertFinds(h, "torn-row")

    def test_an_aborted_register_read(self):
        h = History().op("p1", "uwrite", ["u0"], 0, 1, "fail", write=reg("p1-1", 7))
        h.op("p2", "uread", ["u0"], 2, 3, registers={"u0": reg("p1-1", 7)})
        self.assertFinds(h, "G1a")

    def test_a_value_no_one_wrote(self):
        h = History().op("p2", "uread", ["u0"], 2, 3, registers={"u0": reg("p9-9", 7)})
        self.assertFinds(h, "garbage-read")

    def test_last_writer_wins_in_realtime(self):
        h = History().op("p1", "uwrite", ["u0"], 0, 1, write=reg("p1-1", 7))
        h.op("p1", "uwrite", ["u0"], 2, 3, write=reg("p1-2", 8))
        h.op("final", "uread", ["u0"], 4, 5, registers={"u0": reg("p1-1", 7)})
        self.assertFinds(h, "lost-write")

    def test_a_lost_update_of_a_counter(self):
        h = History().op("p1", "incr", ["r0"], 0, 5, registers={"r0": reg("init", 0)}, write=reg("p1-1", 1))
        h.op("p2", "incr", ["r0"], 0, 5, registers={"r0": reg("init", 0)}, write=reg("p2-1", 1))
        self.assertFinds(h, "lost-update")

    def test_a_lost_increment(self):
        h = History().op("p1", "incr", ["r0"], 0, 1, registers={"r0": reg("init", 0)}, write=reg("p1-1", 1))
        h.op("final", "pread", ["r0"], 4, 5, registers={"r0": reg("init", 0)})
        self.assertFinds(h, "lost-write")


class HistoryFormatTests(unittest.TestCase):
    def test_a_torn_last_line_is_dropped(self):
        lines = History().op("p1", "read", ["k0"], 0, 1, lists={"k0": []}).lines + ['{"process": "p1", "o']
        self.assertEqual(len(parse_lines(lines)), 1)

    def test_a_torn_line_within_is_an_error(self):
        lines = ['{"process": "p1", "o'] + History().op("p1", "read", ["k0"], 0, 1, lists={"k0": []}).lines
        with self.assertRaises(HistoryError):
            parse_lines(lines)

    def test_too_few_acknowledged_operations_fail_the_run(self):
        operations = parse_lines(History().op("p1", "read", ["k0"], 0, 1, lists={"k0": []}).lines)
        with redirect_stdout(io.StringIO()) as output:
            self.assertEqual(report("t", operations, check(operations), 1), 1)
        self.assertIn("too little was checked", output.getvalue())


if __name__ == "__main__":
    unittest.main()
