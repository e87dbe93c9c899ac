"""The dependency graph of committed operations and the cycles in it (Adya's G0, G1c, G2).

Edges: ww (one write's version follows another's), wr (a read saw a write), rw (a read saw the version
before a write: the write must come after it), and po (process order: the next operation a process began
after this one ended). A cycle of ww edges alone is G0 (dirty write); with wr edges G1c (circular
information flow); one that needs an rw edge is G2 (an anti-dependency cycle, which snapshot isolation
allows as write skew and serializability forbids); one that needs process order too breaks a process's
own order (a read that misses its own process's earlier write). Strongly connected components are found
by Tarjan's algorithm, iterative so that long histories do not exhaust Python's stack; each component is
then searched again with fewer kinds of edges to name the weakest cycle it holds.
"""

from collections import deque

LEVELS = (("G0", {"ww"}), ("G1c", {"ww", "wr"}), ("G2", {"ww", "wr", "rw"}),
          ("G-process", {"ww", "wr", "rw", "po"}))


class Graph:
    """Nodes (operations) and labelled edges between them; edges to operations that are not nodes (ones
    that failed, or did not commit) are kept but never followed."""

    def __init__(self):
        self.nodes = set()
        self.edges = {}

    def add_node(self, node):
        self.nodes.add(node)

    def add_edge(self, source, target, label):
        if source is not target:
            self.edges.setdefault(source, {}).setdefault(target, set()).add(label)

    def successors(self, node, labels, within):
        for target, kinds in self.edges.get(node, {}).items():
            if target in within and kinds & labels:
                yield target


def components(graph, nodes, labels):
    """The strongly connected components of more than one node, over edges with a label in `labels`."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for root in sorted(nodes, key=str):
        if root in index:
            continue
        work = [(root, iter(list(graph.successors(root, labels, nodes))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(list(graph.successors(child, labels, nodes)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member is node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def a_cycle(graph, component, labels):
    """One shortest cycle within `component` over `labels`, as [(node, label, next node), ...]."""
    best = None
    for start in sorted(component, key=str)[:20]:
        parents = {start: None}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for target in graph.successors(node, labels, component):
                if target is start:
                    path = [node]
                    while parents[path[-1]] is not None:
                        path.append(parents[path[-1]])
                    path.reverse()
                    if best is None or len(path) < len(best):
                        best = path
                    queue.clear()
                    break
                if target not in parents:
                    parents[target] = node
                    queue.append(target)
    if best is None:
        return []
    steps = []
    for node, following in zip(best, best[1:] + best[:1]):
        kinds = graph.edges[node][following] & labels
        steps.append((node, "/".join(sorted(kinds)), following))
    return steps


def check_cycles(graph, findings):
    """Reports each cycle under the weakest level of LEVELS that holds it."""
    explained = set()
    for name, labels in LEVELS:
        for component in components(graph, graph.nodes, labels):
            if component & explained:
                continue
            explained |= component
            cycle = a_cycle(graph, component, labels)
            text = " ".join(f"{node} -{label}->" for node, label, _ in cycle)
            findings.add(name, f"{len(component)} operations in a cycle: {text} {cycle[0][0] if cycle else ''}")
