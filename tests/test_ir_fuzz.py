"""Robustness: mutated PTX either parses (and builds a CFG) or raises PTXError -- never another
exception, never a traceback for the user (DESIGN §2 "never a bare traceback")."""

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from simt_fast.ir import PTXError, build_cfg, flatten, parse_ptx

from hypothesis_budget import examples

DATA = Path(__file__).parent / "data" / "ir"
SOURCES = [(DATA / n).read_text() for n in ("short_circuit.ptx", "switch_brx.ptx", "barrier.ptx")]
SOURCES.append((Path(__file__).resolve().parents[1] / "data" / "ptx" / "corpus" / "switch_calls.O0.ptx").read_text())
JUNK = ["{", "}", ";", ":", "[", "]", "(", ")", ",", "@", "!", "%", ".", "|", "_", "$L", "0x", "0f", '"', "/*", "//", "\n", " ", "+", "-", "<", ">", "9", "bra", ".reg", ".param", "ret;"]


@examples(200)
@given(
    st.sampled_from(range(len(SOURCES))),
    st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 3), st.sampled_from(JUNK)), min_size=1, max_size=4),
)
def test_mutated_ptx_parses_or_raises_ptxerror(which, edits):
    text = SOURCES[which]
    for where, delete, junk in edits:
        i = int(where * len(text))
        text = text[:i] + junk + text[i + delete :]
    try:
        module = parse_ptx(text, "fuzz.ptx")
    except PTXError as e:
        msg = str(e)
        assert msg.startswith("fuzz.ptx") and "\n" not in msg.strip("`")
        return
    for f in module.functions.values():
        try:
            cfg = build_cfg(f)
            cfg.ipdom, cfg.loops, cfg.control_deps  # noqa: B018
            flatten(f, cfg)
        except PTXError:
            pass
