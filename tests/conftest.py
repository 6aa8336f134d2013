"""Shared test configuration: the `slow` marker and the hypothesis profiles, defined once.

* Every test runs by default, slow ones included (CI runs the README's test command, which is
  the whole suite). ``pytest -m "not slow"`` skips the default-size launches and PTX rebuilds
  for a quicker local loop.
* Hypothesis profiles (``HYPOTHESIS_PROFILE=<name>``, default ``ci``): ``ci`` is derandomized,
  so a CI run is reproducible and a failure replays; ``dev`` draws fewer, random examples;
  ``thorough`` draws ten times as many, for a long hunt. Tests that set ``max_examples``
  themselves keep it under ``ci``; the profile scales nothing behind their back.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", derandomize=True, print_blob=True, **_COMMON)
settings.register_profile("dev", max_examples=20, **_COMMON)
settings.register_profile("thorough", max_examples=1000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
