"""The list-append workload: appends of unique elements to ordered lists, and reads of whole lists.

Each element is written once, so a read names the operations it saw, and the version order of a key is
the order of its longest read: every other read must be a prefix of it. From that order come the
dependency edges (ww between consecutive appends, wr from an append to the reads that saw it last, rw from
a read to the append after what it saw) and the checks that need no graph: duplicated elements, elements
no one wrote or whose append failed (G1a), a multi-element append seen in part (G1b), reads that disagree
on the order, an append committed on a list other than the one it read (a lost update), and acknowledged
appends missing from a read that began after they were acknowledged (stale reads and lost appends).
"""

from history import FAIL, OK, HistoryError


def brief(elements):
    """A long list shortened for a message: its length, its first and last few elements."""
    if len(elements) <= 8:
        return str(elements)
    return f"[{', '.join(elements[:2])}, ... {', '.join(elements[-5:])}] ({len(elements)} elements)"


def committed_appends(operations, writer):
    """Append operations that committed: acknowledged, or of unknown outcome but seen by a read."""
    seen = {op for (_, _), op in writer.items() if op.type != FAIL and op.seen}
    return {op for op in operations if op.kind == "append" and op.type == OK} | seen


def check_lists(operations, findings, graph):
    """Checks the list operations of `operations`, reports to `findings` and adds edges to `graph`."""
    writer = {}
    for op in operations:
        op.seen = set()
        if op.kind != "append":
            continue
        for key in op.keys:
            for element in op.append:
                if (key, element) in writer:
                    raise HistoryError(f"{element} appended to {key} twice, by {writer[key, element]} and {op}")
                writer[key, element] = op
    reads = {}
    for op in operations:
        for key, elements in op.lists.items():
            reads.setdefault(key, []).append((op, elements))
    for key, key_reads in sorted(reads.items()):
        order = check_key(key, key_reads, writer, findings)
        if order is not None:
            add_edges(key, order, key_reads, writer, graph)
    committed = committed_appends(operations, writer)
    for op in committed:
        graph.add_node(op)
    for key, key_reads in sorted(reads.items()):
        check_realtime(key, key_reads, [op for op in committed if key in op.keys and op.type == OK], findings)


def check_key(key, key_reads, writer, findings):
    """The writers of `key` in version order, after the checks of each read; None when reads disagree."""
    longest = []
    for op, elements in key_reads:
        check_read(key, op, elements, writer, findings)
        if len(elements) > len(longest):
            longest = elements
    consistent = True
    for op, elements in key_reads:
        if elements != longest[: len(elements)]:
            findings.add("incompatible-order", f"{op} read {key} = {brief(elements)}, not a prefix of {brief(longest)}")
            consistent = False
    if not consistent:
        return None
    order = []
    for element in longest:
        op = writer.get((key, element))
        if op is not None and (not order or order[-1] is not op):
            order.append(op)
    for index, op in enumerate(order):
        before = op.lists.get(key)
        if before is None:
            continue
        start = longest.index(op.append[0])
        if longest[:start] != before:
            findings.add(
                "lost-update",
                f"{op} read {key} = {brief(before)} and appended {op.append}, but they follow {brief(longest[:start])}")
    return order


def check_read(key, op, elements, writer, findings):
    """The checks of one read of `key` on its own."""
    positions = {}
    for index, element in enumerate(elements):
        if element in positions:
            findings.add("duplicate-append", f"{op} read {element} twice in {key}: {brief(elements)}")
            continue
        positions[element] = index
        appender = writer.get((key, element))
        if appender is None:
            findings.add("garbage-read", f"{op} read {element} in {key}, which no operation appended")
            continue
        appender.seen.add(key)
        if appender.type == FAIL:
            findings.add("G1a", f"{op} read {element} in {key}, appended by {appender}, which failed")
    for appender in {writer[key, e] for e in positions if (key, e) in writer}:
        places = [positions.get(element) for element in appender.append]
        if None in places:
            findings.add("G1b", f"{op} read {key} = {brief(elements)}: part of {appender}'s {appender.append}")
        elif places != list(range(places[0], places[0] + len(places))):
            findings.add("incompatible-order", f"{op} read {key} = {brief(elements)}: {appender.append} not together")


def add_edges(key, order, key_reads, writer, graph):
    """ww, wr and rw edges of `key` from its version order."""
    for earlier, later in zip(order, order[1:]):
        graph.add_edge(earlier, later, "ww")
    index = {op: position for position, op in enumerate(order)}
    for reader, elements in key_reads:
        if not elements:
            seen = -1
        else:
            last = writer.get((key, elements[-1]))
            if last is None or last not in index:
                continue
            seen = index[last]
            graph.add_edge(last, reader, "wr")
        if seen + 1 < len(order):
            graph.add_edge(reader, order[seen + 1], "rw")


def check_realtime(key, key_reads, acknowledged, findings):
    """Every append acknowledged before a read began is in it: else a stale read, or a lost append when
    no read ever saw it or the final read (process `final`, after every writer stopped) does not."""
    acknowledged = sorted(acknowledged, key=lambda op: op.completed)
    lost = set()
    for reader, elements in key_reads:
        present = set(elements)
        for op in acknowledged:
            if op.completed >= reader.invoked:
                break
            if op is reader or all(element in present for element in op.append):
                continue
            if reader.process == "final" or key not in op.seen:
                if op not in lost:
                    lost.add(op)
                    findings.add("lost-append", f"{op} appended {op.append} to {key}; {reader} did not see it")
            else:
                findings.add("stale-read", f"{reader} read {key} without {op.append}, acknowledged before")
