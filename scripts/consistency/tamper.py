#!/usr/bin/env python3
"""Copies a recorded history with two faults planted in its final reads, for scripts/test-faults.sh to show
that the checker finds them in a real history too: not only in the hand-made ones of test_check.py.

usage: scripts/consistency/tamper.py HISTORY-DIR OUT-DIR

The final read of lists loses an element (the append that wrote it was acknowledged: a lost append), and
the final read of persistent registers gets a torn row (one tag column changed). Exits 1 when the history
has no such final reads to tamper with.
"""

import json
import os
import shutil
import sys


def main(source, target):
    os.makedirs(target, exist_ok=True)
    for name in os.listdir(source):
        if name.endswith(".jsonl") and name != "final.jsonl":
            shutil.copy(os.path.join(source, name), target)
    planted = set()
    lines = []
    with open(os.path.join(source, "final.jsonl"), encoding="utf-8") as file:
        for text in file:
            line = json.loads(text)
            if line["type"] == "ok" and line["kind"] == "read" and "lost" not in planted:
                key = next((key for key, elements in sorted(line["lists"].items()) if elements), None)
                if key is not None:
                    line["lists"][key].pop()
                    planted.add("lost")
            if line["type"] == "ok" and line["kind"] == "pread" and "torn" not in planted:
                key = sorted(line["registers"])[0]
                line["registers"][key]["b"] = "tampered"
                planted.add("torn")
            lines.append(json.dumps(line))
    with open(os.path.join(target, "final.jsonl"), "w", encoding="utf-8") as file:
        file.write("\n".join(lines) + "\n")
    return 0 if planted == {"lost", "torn"} else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
