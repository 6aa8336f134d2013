"""The hypothesis profiles and every property test's example count, defined once.

``HYPOTHESIS_PROFILE=<name>`` (default ``ci``) picks the profile:

* ``ci`` — what CI runs: derandomized, so a run is reproducible and a failure replays; every
  property test draws at least ``CI_FLOOR`` examples, so none is one fixed example;
* ``dev`` — random examples, a fifth of each count (at least 2), for a quick local loop;
* ``thorough`` — ten times every count, for a long hunt.

A property test states its count with ``@examples(n)`` (not ``@settings(max_examples=n)``): the
examples it draws under ``ci`` (or ``CI_FLOOR``, if more); the profile scales it. A test without a
count of its own draws the profile's default: 100 under ``ci``, 20 under ``dev``, 1000 under
``thorough``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
CI_FLOOR = 10
THOROUGH_FACTOR = 10

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", derandomize=True, print_blob=True, **_COMMON)
settings.register_profile("dev", max_examples=20, **_COMMON)
settings.register_profile("thorough", max_examples=100 * THOROUGH_FACTOR, **_COMMON)


def example_count(n: int) -> int:
    """Examples a test that asks for ``n`` draws under the active profile."""
    if PROFILE == "thorough":
        return n * THOROUGH_FACTOR
    if PROFILE == "dev":
        return max(2, n // 5)
    return max(n, CI_FLOOR)


def examples(n: int, **kw) -> settings:
    """``settings`` of a property test that draws ``n`` examples under ``ci`` (scaled by the profile;
    ``kw``: any other setting)."""
    return settings(**{"deadline": None, **kw, "max_examples": example_count(n)})
