"""End-to-end property test: random CFGs written out as PTX come back from parse_ptx + build_cfg
with exactly the generated blocks, successors, barriers and instruction ranges."""

from hypothesis import given
from hypothesis import strategies as st

from simt_fast.ir import OpClass, build_cfg, flatten, parse_ptx

from hypothesis_budget import examples

HEAD = ".version 8.0\n.target sm_75\n.address_size 64\n\n.visible .entry rnd(\n\t.param .u64 rnd_param_0\n)\n{\n"
DECLS = "\t.reg .pred \t%p<4>;\n\t.reg .b32 \t%r<8>;\n\t.reg .b64 \t%rd<4>;\n\t.shared .align 4 .b8 \tbuf[64];\n"
BODY_OPS = [
    "add.s32 \t%r1, %r2, {imm};",
    "mul.lo.s32 \t%r3, %r1, %r1;",
    "ld.param.u64 \t%rd1, [rnd_param_0];",
    "ld.global.u32 \t%r4, [%rd1+{imm}];",
    "st.shared.u32 \t[buf+8], %r4;",
    "setp.lt.s32 \t%p1, %r1, {imm};",
    "selp.b32 \t%r5, %r1, %r2, %p1;",
    "mov.u32 \t%r6, %tid.x;",
    "sin.approx.f32 \t%r7, %r7;",
]
TERMINATORS = ["fall", "bra", "cbra", "ret", "cret", "brx", "bar"]


@st.composite
def programs(draw):
    n = draw(st.integers(1, 10))
    blocks = []
    for k in range(n):
        body = draw(st.lists(st.sampled_from(BODY_OPS), min_size=0, max_size=3))
        term = draw(st.sampled_from(TERMINATORS))
        if not body and term == "fall":
            body = [BODY_OPS[0]]  # an empty fall-through block would merge with its successor
        target = draw(st.integers(0, n - 1))
        table = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
        guarded_brx = draw(st.booleans())
        imm = draw(st.integers(-100, 100))
        blocks.append((body, term, target, table, guarded_brx, imm))
    return blocks


def render(blocks):
    lines = [HEAD, DECLS]
    for k, (body, term, target, table, guarded, imm) in enumerate(blocks):
        lines.append(f"$B{k}:")
        lines += ["\t" + op.format(imm=imm) for op in body]
        if term == "bra":
            lines.append(f"\tbra.uni \t$B{target};")
        elif term == "cbra":
            lines.append(f"\t@%p1 bra \t$B{target};")
        elif term == "ret":
            lines.append("\tret;")
        elif term == "cret":
            lines.append("\t@!%p2 ret;")
        elif term == "brx":
            lines.append(f"$T{k}: .branchtargets " + ", ".join(f"$B{t}" for t in table) + ";")
            lines.append(("\t@%p3 " if guarded else "\t") + f"brx.idx \t%r1, $T{k};")
        elif term == "bar":
            lines.append("\tbar.sync \t0;")
    lines.append("}\n")
    return "\n".join(lines)


def expected(blocks):
    n = len(blocks)
    exit_id = n

    def dedupe(xs):
        out = []
        for x in xs:
            if x not in out:
                out.append(x)
        return out

    succs, sizes = [], []
    for k, (body, term, target, table, guarded, _) in enumerate(blocks):
        fall = k + 1 if k + 1 < n else exit_id
        s = {
            "fall": [fall],
            "bar": [fall],
            "bra": [target],
            "cbra": [target, fall],
            "ret": [exit_id],
            "cret": [exit_id, fall],
            "brx": table + ([fall] if guarded else []),
        }[term]
        succs.append(dedupe(s))
        sizes.append(len(body) + (0 if term == "fall" else 1))
    return succs + [[]], sizes + [0]


@examples(100)
@given(programs())
def test_random_ptx_round_trips_to_the_generated_cfg(blocks):
    text = render(blocks)
    module = parse_ptx(text, "random.ptx")
    k = module.find_kernel("rnd")
    cfg = build_cfg(k)
    succs, sizes = expected(blocks)
    assert [b.succs for b in cfg.blocks] == succs
    assert [b.n_instrs for b in cfg.blocks] == sizes
    assert [b.label for b in cfg.blocks] == [f"$B{i}" for i in range(len(blocks))] + ["<exit>"]
    assert list(cfg.has_barrier) == [t == "bar" for _, t, *_ in blocks] + [False]
    flat = flatten(k, cfg)
    ends = flat["block_start"][1:]
    for b in range(len(blocks)):
        term = blocks[b][1]
        if term in ("bra", "cbra", "brx"):
            assert flat["op_class"][ends[b] - 1] == OpClass.BRANCH
        elif term in ("ret", "cret"):
            assert flat["op_class"][ends[b] - 1] == OpClass.EXIT
        elif term == "bar":
            assert flat["op_class"][ends[b] - 1] == OpClass.BARRIER
    # every IPDOM post-dominates its block
    for b in cfg.blocks[:-1]:
        assert cfg.postdominates(int(cfg.ipdom[b.id]), b.id)
