"""report's quarters.png: its legends sit clear of every bar (the stacked bars fill their axes to 1.0)."""

import numpy as np
import pandas as pd

from simt_fast import report
from simt_fast.sim.config import SimConfig


def test_quarter_figure_legends_cover_no_bar(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    rows = []
    for trace, q, plain, squeezed in (("a", [0, 6, 2, 0, 2], 1000, 800), ("b", [0, 0, 0, 0, 5], 500, 500),
                                      ("c", [0, 1, 1, 1, 1], 700, 650)):
        for hws, cycles in ((False, plain), (True, squeezed)):
            rows.append({**SimConfig(mechanism="sps", simd_width=8, hws=hws).to_dict(), "trace": trace,
                         "trace_id": trace, "cycles": cycles, "quarter_hist": np.array(q)})
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure the report draws
    path, _ = report._quarter_figure(pd.DataFrame(rows), tmp_path, {"mechanism": "sps"})
    assert path.is_file() and len(figures) == 1
    fig = figures[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        legend = ax.get_legend().get_window_extent(renderer)
        bars = [p.get_window_extent(renderer) for p in ax.patches if p.get_height() > 0]
        assert bars and not any(legend.overlaps(bar) for bar in bars), ax.get_title()
    plt.close("all")
