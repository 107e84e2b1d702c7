"""Shared test setup: the oracles package (tests/oracles) is importable as ``oracles``."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
