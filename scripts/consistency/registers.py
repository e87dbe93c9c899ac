"""The register workloads: unique structs (blind writes, last writer wins) and persistent structs
(read-modify-write increments, version-checked).

Every write stores a number and its operation's tag (in two columns for an employee), so a read names the
write it saw, and a row mixing two writes is seen: a tag column that disagrees with the other, or a number
that is not the one the tag's write wrote (torn). The initial state of every key is the number 0 tagged
`init`.

Unique registers have no version order to infer beyond realtime: a read must not return a write that an
acknowledged write had overwritten before the read began (stale read). Persistent registers do: each
increment read the state it replaced, so the committed increments of a key form a chain from `init`, two
committed increments of the same state are a lost update, an acknowledged increment missing from the chain
that ends in the final read is lost, and the chain gives the ww, wr and rw edges of the dependency graph.
"""

from history import FAIL, OK

INIT = "init"


def tag_of(op):
    """The tag a write writes: logged when it was invoked (an increment's number is known only once it read
    the state before it, so a process killed mid-increment leaves its tag alone)."""
    return op.tag if op.tag is not None else (op.write or {}).get("a")


def writes_by_tag(operations, kind):
    """The writes of `kind`, by (key, tag)."""
    return {(op.keys[0], tag_of(op)): op for op in operations if op.kind == kind and tag_of(op) is not None}


def register_reads(operations, kinds):
    """(key, reader, state) for every register read of an operation of `kinds`."""
    return [(key, op, state) for op in operations if op.kind in kinds for key, state in op.registers.items()]


def check_state(key, reader, state, writes, findings):
    """The checks of one read on its own; returns the write it saw (None for `init` or an unknown tag)."""
    if state["a"] != state["b"]:
        findings.add("torn-row", f"{reader} read {key} = {state}: its two tag columns disagree")
    if state["a"] == INIT:
        if state["n"] != 0:
            findings.add("torn-row", f"{reader} read {key} = {state}: init with another number")
        return None
    write = writes.get((key, state["a"]))
    if write is None:
        findings.add("garbage-read", f"{reader} read {key} = {state}, which no operation wrote")
        return None
    if write.write is not None and write.write["n"] != state["n"]:
        findings.add("torn-row", f"{reader} read {key} = {state}, but {write} wrote {write.write}")
    if write.type == FAIL and write is not reader:
        findings.add("G1a", f"{reader} read {key} = {state}, written by {write}, which failed")
    return write


def check_stale(key, reader, seen, acknowledged, overwrote, findings):
    """A read must not return a write that an acknowledged write overwrote (says `overwrote`) before the
    read began."""
    for op in acknowledged.get(key, []):
        if op.completed >= reader.invoked:
            break
        if op is not seen and op is not reader and overwrote(op):
            # The final read began after every writer stopped: what it misses is lost.
            kind = "lost-write" if reader.process == "final" else "stale-read"
            findings.add(kind, f"{reader} read {key} from {seen or INIT}; {op} overwrote it before")
            return


def check_unique_registers(operations, findings):
    """Checks `uwrite` and `uread`."""
    writes = writes_by_tag(operations, "uwrite")
    acknowledged = {}
    for op in sorted(writes.values(), key=lambda op: op.completed):
        if op.type == OK:
            acknowledged.setdefault(op.keys[0], []).append(op)
    for key, reader, state in register_reads(operations, ("uread",)):
        seen = check_state(key, reader, state, writes, findings)
        # Last writer wins: a write begun after the one seen was acknowledged committed after it.
        seen_completed = 0 if seen is None else seen.completed
        check_stale(key, reader, seen, acknowledged, lambda op: seen_completed < op.invoked, findings)


def check_persistent_registers(operations, findings, graph):
    """Checks `incr` and `pread`, and adds the chains' edges to `graph`."""
    writes = writes_by_tag(operations, "incr")
    reads = register_reads(operations, ("incr", "pread"))
    seen_by, number = {}, {}
    for key, reader, state in reads:
        write = check_state(key, reader, state, writes, findings)
        if write is not None:
            seen_by.setdefault(write, []).append((key, reader))
            number[write] = state["n"]
    # Committed: acknowledged, or unknown but read by someone (its own read is of the state before it).
    committed = [op for op in writes.values() if op.type == OK or (op.type != FAIL and op in seen_by)]
    successors, orphans = {}, {}
    for op in committed:
        key = op.keys[0]
        if op.write is not None:
            number[op] = op.write["n"]
        before = op.registers.get(key, {}).get("a")
        if before is None:
            # Killed before it could log what it read: placed by the number it wrote (see chain).
            orphans.setdefault(key, []).append(op)
        else:
            successors.setdefault((key, before), []).append(op)
    for (key, before), ops in sorted(successors.items(), key=lambda item: str(item[0])):
        if len(ops) > 1:
            findings.add("lost-update", f"{', '.join(map(str, ops))} all incremented {key} from {before}")
    chains = {key: chain(key, successors, orphans.get(key, []), number) for key in {op.keys[0] for op in committed}}
    position = {op: index for key, ops in chains.items() for index, op in enumerate(ops)}
    for ops in chains.values():
        for earlier, later in zip(ops, ops[1:]):
            graph.add_edge(earlier, later, "ww")
    for op in committed:
        graph.add_node(op)
        if op.type == OK and op not in position:
            findings.add("lost-increment", f"{op} was acknowledged, but no chain of increments from init has it")
    acknowledged = {}
    for op in sorted(committed, key=lambda op: op.completed):
        if op.type == OK and op in position:
            acknowledged.setdefault(op.keys[0], []).append(op)
    for key, reader, state in reads:
        seen = writes.get((key, state["a"]))
        if seen is not None and seen not in position:
            continue
        if seen is not None:
            graph.add_edge(seen, reader, "wr")
        index = -1 if seen is None else position[seen]
        if index + 1 < len(chains.get(key, [])):
            graph.add_edge(reader, chains[key][index + 1], "rw")
        check_stale(key, reader, seen, acknowledged, lambda op: position[op] > index, findings)


def chain(key, successors, orphans, number):
    """The increments of `key` from `init` on, each the first that incremented the one before; where none
    says it read the one before, the one increment of unknown origin (its process was killed) whose number
    is one more."""
    ops, tag, n = [], INIT, 0
    while True:
        following = successors.get((key, tag))
        if not following:
            following = [op for op in orphans if number.get(op) == n + 1 and op not in ops]
            if len(following) != 1:
                return ops
        ops.append(following[0])
        tag, n = tag_of(following[0]), number.get(following[0], n + 1)
