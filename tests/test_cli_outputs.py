"""Simple mistakes are one sentence and exit 2, before any work: output paths, file kinds, binary
input, PTX versions and targets, control characters in messages."""

import json
from pathlib import Path

import pytest
from trace_helpers import tiny_trace
from typer.testing import CliRunner

from simt_fast._text import printable
from simt_fast.cli import app
from simt_fast.ir import parse_ptx
from simt_fast.ir.model import PTXError
from simt_fast.results import ResultsWriter
from simt_fast.sim.config import SimConfig

PTX = sorted((Path(__file__).parents[1] / "data" / "ptx").glob("*/*.ptx"))[0]
HEAD = ".version 8.0\n.target sm_75\n.address_size 64\n"
KERNEL = ".visible .entry k()\n{\n  ret;\n}\n"


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def one_error(result, expected: str = None) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    if expected is not None:
        assert lines[0] == f"error: {expected}"
    return lines[0]


def results_file(path):
    with ResultsWriter(path) as w:
        w.append("0" * 32, "t" * 64, "t", SimConfig().to_dict(), {"cycles": 1})
    return path


@pytest.mark.parametrize("command", [["structurize", PTX], ["cfg", PTX, "--json"], ["analyze", PTX, "--json"]])
def test_output_in_a_missing_directory_or_a_directory(tmp_path, command):
    one_error(run(*command, "-o", tmp_path / "nodir" / "out.txt"),
              f"cannot write output file {tmp_path / 'nodir' / 'out.txt'}: directory {tmp_path / 'nodir'} does not exist")
    one_error(run(*command, "-o", tmp_path), f"output file {tmp_path} is a directory; name a file")
    assert sorted(tmp_path.iterdir()) == []


def test_cfg_output_format_follows_the_file_name(tmp_path):
    one_error(run("cfg", PTX, "-o", tmp_path / "c.txt"))
    assert not (tmp_path / "c.txt").exists()
    assert run("cfg", PTX, "-o", tmp_path / "c.json").exit_code == 0
    assert json.loads((tmp_path / "c.json").read_text())["kernels"]
    assert run("cfg", PTX, "-o", tmp_path / "c.dot").exit_code == 0
    assert (tmp_path / "c.dot").read_text().startswith("digraph")


def test_report_into_an_existing_file(tmp_path):
    (tmp_path / "existing").write_text("keep me")
    one_error(run("report", results_file(tmp_path / "r.h5"), "-o", tmp_path / "existing"),
              f"report directory {tmp_path / 'existing'} exists and is not a directory; name a directory")
    assert (tmp_path / "existing").read_text() == "keep me"


def test_trace_outputs_never_replace_a_results_file_unknowingly(tmp_path):
    res = results_file(tmp_path / "r.h5")
    before = res.read_bytes()
    msg = f"trace file {res} exists and is a simt-fast results file, not a trace; choose another name, or pass --force to replace it"
    one_error(run("trace", "bfs", "--size", "tiny", "-o", res), msg)
    one_error(run("synth", res), msg)
    assert res.read_bytes() == before
    notes = tmp_path / "notes.txt"
    notes.write_text("x")
    one_error(run("synth", notes))
    assert run("synth", notes, "--force").exit_code == 0
    assert run("synth", notes).exit_code == 0  # a trace file is replaced as before


def test_sweep_output_that_is_a_trace_is_refused_before_any_work(tmp_path):
    trace = tmp_path / "t.h5"
    tiny_trace().save(trace)
    sweep = tmp_path / "s.toml"
    sweep.write_text('workloads = ["bfs"]\n[grid]\nmechanism = ["sps"]\n')
    one_error(run("sweep", sweep, "-o", trace, "--cache-dir", tmp_path / "cache"),
              f"results file {trace} exists and is a simt-fast trace file, not a results file; choose another name")
    assert not (tmp_path / "cache").exists()  # nothing was traced


def test_binary_sweep_and_config_files(tmp_path):
    sweep = tmp_path / "s.toml"
    sweep.write_bytes(b'traces = ["t.h5"]\n\xff\xfe\x1b[2J')
    one_error(run("sweep", sweep, "-o", tmp_path / "r.h5"),
              f"{sweep}:2: byte 0xff is not UTF-8 text, so this is not a sweep file (TOML text)")
    trace = tmp_path / "t.h5"
    tiny_trace().save(trace)
    conf = tmp_path / "c.toml"
    conf.write_bytes(b"\x00\x01\x80")
    one_error(run("run", trace, "--config", conf), f"{conf}:1: byte 0x80 is not UTF-8 text, so this is not a config file (TOML text)")


@pytest.mark.parametrize("header, accepted", [
    (".version 99.9\n.target sm_75\n", False),
    (".version 10.0\n.target sm_75\n", False),
    (".version 9.0\n.target sm_999\n", False),
    (".version 9.0\n.target compute_75\n", False),
    (".version 9.0\n.target sm_75, texmode_unified, fancy\n", False),
    (".version 1.4\n.target sm_13\n", True),
    (".version 9.0\n.target sm_90a\n", True),
    (".version 8.8\n.target sm_100f, debug\n", True),
])
def test_ptx_versions_and_targets(header, accepted):
    text = header + ".address_size 64\n" + KERNEL
    if accepted:
        assert parse_ptx(text).kernels
        return
    with pytest.raises(PTXError, match=r"(PTX ISA version .* is not one this front end knows \(1\.0 to 9\.x\)|"
                                       r"target '.*' is not an architecture this front end knows \(sm_10 to sm_121\))"):
        parse_ptx(text, "k.ptx")


def test_control_characters_are_escaped_in_errors(tmp_path):
    ptx = tmp_path / "k.ptx"
    ptx.write_bytes((HEAD + ".visible .entry k()\n{\n  frob\x1b]0;pwned\x07.u32 %r1;\n}\n").encode())
    line = one_error(run("cfg", ptx))
    assert "\x1b" not in line and "\x07" not in line
    assert "frob\\x1b]0" in line  # the ";" of the escape sequence ends the PTX statement
    assert printable("a\nb\tc\u202ed\x00") == "a\\nb\\tc\\u202ed\\x00"
    assert printable("plain ünïcode") == "plain ünïcode"
