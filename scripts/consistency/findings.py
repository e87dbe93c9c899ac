"""The anomalies a check found, by kind, each with a few examples to look at."""

EXAMPLES = 5


class Findings:
    """Anomalies by kind: how many, and the first few explained."""

    def __init__(self):
        self.count = {}
        self.examples = {}
        # What the cycle search covered, for the report.
        self.graph = ""

    def add(self, kind, message):
        self.count[kind] = self.count.get(kind, 0) + 1
        examples = self.examples.setdefault(kind, [])
        if len(examples) < EXAMPLES:
            examples.append(message)

    def total(self):
        return sum(self.count.values())

    def kinds(self):
        return set(self.count)
