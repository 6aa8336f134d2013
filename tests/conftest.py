"""Shared test configuration: the `slow` marker and the hypothesis profile (defined in
tests/hypothesis_budget.py with every property test's example count).

* Every test runs by default, slow ones included (CI runs the README's test command, which is
  the whole suite). ``pytest -m "not slow"`` skips the default-size launches and PTX rebuilds
  for a quicker local loop.
* ``HYPOTHESIS_PROFILE=<name>`` (default ``ci``): ``ci`` is derandomized with a floor of examples
  per property test, ``dev`` draws fewer, random examples, ``thorough`` ten times every test's count.
"""

from __future__ import annotations

from hypothesis import settings

from hypothesis_budget import PROFILE

settings.load_profile(PROFILE)
