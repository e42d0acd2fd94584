"""What the capture tests share: the record filters and a TestCase that starts each test from clean caches, with
errors of the engine's backends raised (not run eagerly) so that a failing backend fails the test."""
import unittest

import fxcapture

fxcapture.install()


def kinds(start, kind):
    return [r for r in fxcapture.records[start:] if r["kind"] == kind]


def compiles(start=0):
    return kinds(start, "compile")


class CaptureTest(unittest.TestCase):
    def setUp(self):
        fxcapture.reset()
        fxcapture.set_stance("default")
        fxcapture.config.recompile_limit = 8
        # an engine backend that fails raises: no test passes by comparing torch eager with itself
        fxcapture.config.suppress_errors = False
        self.start = len(fxcapture.records)
        self.counters = dict(fxcapture.counters)

    def engine_counts(self):
        """(graphs the engine's backends compiled, graphs that fell back to eager) since setUp."""
        return (fxcapture.counters["engine_compiles"] - self.counters["engine_compiles"],
                fxcapture.counters["eager_fallbacks"] - self.counters["eager_fallbacks"])
