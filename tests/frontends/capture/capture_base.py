"""What the capture tests share: the record filters and a TestCase that starts each test from clean caches, with
errors of the engine's backends raised (not run eagerly) so that a failing backend fails the test."""
import os
import re
import unittest

import torch

import fxcapture

fxcapture.install()


def short_path(path):
    """torch.utils._traceback.shorten_filename, which guard comments use: the path past its common path with the
    torch package's folder, less one more character."""
    base = os.path.dirname(torch.__file__)
    try:
        prefix = os.path.commonpath([path, base])
    except ValueError:
        return path
    return path[len(prefix) + 1:]


def here(path):
    """The guard-comment spelling of a code file (its co_filename, e.g. a test's __file__), escaped for a regex."""
    return re.escape(short_path(path))


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
