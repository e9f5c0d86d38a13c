"""``tape.to_svg()``: the tape drawn by microtape itself, as a layered SVG, with no Graphviz.

The drawing must be a standalone SVG, escape every name, give the same bytes for the same tape,
put inputs above the ops that read them and the loss at the bottom, draw a tree or a chain without
crossings, never overlap two boxes, and draw 200 ops quickly. The last tests render it in headless
Chromium and look at the screenshot.
"""

from __future__ import annotations

import itertools
import math
import re
import shutil
import struct
import tempfile
import time
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

import microtape as mt

SVG_NS = "{http://www.w3.org/2000/svg}"
EVIL = "<script>alert(1)</script>"


@dataclass(frozen=True)
class Node:
    key: str
    kind: str
    x: float
    y: float
    width: float
    height: float
    text: tuple[str, ...]


def parse(svg: str) -> tuple[ET.Element, dict[str, Node], list[list[tuple[float, float]]]]:
    """The SVG's root (it must be well-formed XML), its node boxes by key and its edges as point lists."""
    root = ET.fromstring(svg)
    nodes = {}
    for g in root.iter(f"{SVG_NS}g"):
        rect = g.find(f"{SVG_NS}rect")
        assert rect is not None
        texts = tuple(t.text or "" for t in g.iter(f"{SVG_NS}text"))
        x, y, w, h = (float(rect.attrib[a]) for a in ("x", "y", "width", "height"))
        nodes[g.attrib["data-key"]] = Node(g.attrib["data-key"], g.attrib["data-kind"], x, y, w, h, texts)
    edges = [
        [(float(a), float(b)) for a, b in (p.split(",") for p in line.attrib["points"].split())]
        for line in root.iter(f"{SVG_NS}polyline")
    ]
    return root, nodes, edges


def overlaps(a: Node, b: Node, gap: float = 0.0) -> bool:
    return a.x < b.x + b.width + gap and b.x < a.x + a.width + gap and a.y < b.y + b.height + gap and b.y < a.y + a.height + gap


def _segments_cross(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float], s: tuple[float, float]) -> bool:
    """Whether segments pq and rs cross at a point inside both (touching ends do not count)."""

    def orient(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> float:
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    d1, d2, d3, d4 = orient(r, s, p), orient(r, s, q), orient(p, q, r), orient(p, q, s)
    return d1 * d2 < 0 and d3 * d4 < 0


def crossings(edges: list[list[tuple[float, float]]]) -> int:
    segments = [(e[k], e[k + 1], i) for i, e in enumerate(edges) for k in range(len(e) - 1)]
    return sum(
        1 for (p, q, i), (r, s, j) in itertools.combinations(segments, 2) if i != j and _segments_cross(p, q, r, s)
    )


def two_hundred_ops() -> mt.GradientTape:
    """200 recorded ops: 20 branches of mul/tanh over one watched input, summed, after gradient()."""
    x = mt.tensor([0.5, -1.0, 2.0])
    ws = [mt.variable(mt.random_normal((3,), seed=i), name=f"w{i}") for i in range(20)]
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        total = None
        for w in ws:
            h = x
            for _ in range(4):
                h = mt.tanh(h * w)
            total = h.sum() if total is None else total + h.sum()
        assert total is not None
        total = total * 1.0
    _ = tape.gradient(total, x)
    assert len(tape.operations) == 200
    return tape


def test_a_standalone_svg_with_size_and_view_box() -> None:
    x = mt.tensor([1.0, 2.0])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = (x * x).sum()
    root, nodes, edges = parse(tape.to_svg())
    assert root.tag == f"{SVG_NS}svg"
    w, h = float(root.attrib["width"]), float(root.attrib["height"])
    assert root.attrib["viewBox"] == f"0 0 {w:.1f} {h:.1f}" and w > 0 and h > 0
    assert sorted(n.kind for n in nodes.values()) == ["op", "op", "watched"]
    assert len(edges) == 2  # x -> mul (once, though read twice), mul -> sum
    assert y.item() == 5.0


def test_each_node_shows_op_shape_values_and_the_gradient_norm() -> None:
    w = mt.variable([1.0, 2.0], name="weights")
    with mt.GradientTape(persistent=True) as tape:
        loss = (w * 3.0).sum()
    before = parse(tape.to_svg())[1]
    assert before["op0"].text == ("#0 mul", "shape (2,)", "[3.0, 6.0]")
    _ = tape.gradient(loss, w)
    after = parse(tape.to_svg())[1]
    assert after["op0"].text == ("#0 mul", "shape (2,)", "[3.0, 6.0]", "|grad| 1.414")
    assert after["op1"].text == ("#1 sum", "shape ()", "= 9.0", "|grad| 1.0")
    assert parse(tape.to_svg(grad_norms=False))[1]["op1"].text == ("#1 sum", "shape ()", "= 9.0")
    kinds = {n.text[0]: n.kind for n in after.values()}
    assert kinds["weights"] == "watched"  # read by the tape, so watched, as to_dot() fills it
    assert [k for k, n in after.items() if n.kind == "constant"]  # the 3.0


def test_a_box_shows_the_values_or_says_it_shows_their_range() -> None:
    """A short vector shows every entry (the book's text says "its values"); a long one says it gives
    the minimum and maximum, of how many entries, and counts NaN and Inf apart."""
    x = mt.tensor1d([1, 2, 3, 4])
    long = mt.tensor([float(i) - 20.0 for i in range(64)] + [math.nan])
    with mt.GradientTape() as tape:
        tape.watch([x, long])
        _ = (x * 0.5).sum() + (long * 2.0).sum()
    texts = {n.text[0]: n.text for n in parse(tape.to_svg())[1].values()}
    assert texts["#0 mul"][2] == "[0.5, 1.0, 1.5, 2.0]"
    assert texts["watched 1"][2] == "[1.0, 2.0, 3.0, 4.0]"
    assert texts["#2 mul"][2:4] == ("min..max -40.0..86.0 of 65", "1 nan/inf")


STABLE_PROGRAM = """
import sys
import microtape as mt
junk = [mt.tensor([float(i)]) for i in range(int(sys.argv[1]))]  # moves every later tensor's id
w = mt.variable(mt.scalar(0.5), name="line_w")
x = mt.tensor1d([1, 2, 3, 4])
with mt.GradientTape(persistent=True) as tape:
    loss = ((x * w - x) ** 2).mean()
tape.gradient(loss, w)
sys.stdout.write(tape.to_svg() + tape.to_dot())
"""


def test_constants_have_the_same_labels_in_every_process(tmp_path: Path) -> None:
    """Constants are named by the order the tape first read them, not by their process-wide ids
    (the book builds every chapter in one process, so ids there run into the thousands)."""
    import os
    import subprocess
    import sys

    script = tmp_path / "stable.py"
    script.write_text(STABLE_PROGRAM)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    runs = [subprocess.run([sys.executable, str(script), n], capture_output=True, text=True, env=env, check=True).stdout for n in ("0", "977")]
    assert runs[0] == runs[1]
    assert "constant 1" in runs[0] and "constant 2" in runs[0] and "tensor #" not in runs[0]
    labels = re.findall(r'label="([^"]*)"', runs[0]) + re.findall(r">([^<>]+)</text>", runs[0])
    assert not [t for t in labels if re.match(r"#\d{2,}", t)], labels  # no tensor id: only record numbers #0..#6
    assert 'label="#0 mul' in runs[0]  # to_dot names an op's output by the record that made it


def test_user_text_is_escaped() -> None:
    v = mt.variable([1.0], name=EVIL)
    with mt.GradientTape() as tape:
        _ = v * 2.0
    svg = tape.to_svg(title='a & b < c > d "e"')
    assert EVIL not in svg and "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    assert "<title>a &amp; b &lt; c &gt; d &quot;e&quot;</title>" in svg
    _, nodes, _ = parse(svg)
    assert any(n.text[0] == EVIL for n in nodes.values())  # the parser gets the name back, as text


def test_the_same_tape_gives_the_same_bytes() -> None:
    tape = two_hundred_ops()
    first = tape.to_svg()
    assert tape.to_svg() == first


def test_a_notebook_shows_the_drawing_then_the_summary() -> None:
    x = mt.tensor([1.0, 2.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = (x * x).sum()
    _ = tape.gradient(y, x)
    assert tape._repr_svg_() == tape.to_svg()
    html = tape._repr_html_()  # Jupyter prefers HTML: the picture comes first
    assert html.startswith(tape.to_svg()) and "<details><summary>summary()</summary>" in html
    assert ">mul<" in html and ">1.414<" in html


def test_inputs_on_top_loss_at_the_bottom_edges_point_down() -> None:
    tape = two_hundred_ops()
    _, nodes, edges = parse(tape.to_svg())
    loss = nodes["op199"]
    assert all(n.y < loss.y for k, n in nodes.items() if k != "op199")
    for edge in edges:
        assert all(a[1] <= b[1] for a, b in zip(edge, edge[1:])), edge  # every edge goes down
    for node in nodes.values():
        if node.kind != "op":  # an input sits right above a reader: an edge leaves its box's bottom
            assert any(math.isclose(e[0][1], node.y + node.height) and node.x <= e[0][0] <= node.x + node.width for e in edges)


def test_no_two_boxes_overlap_and_edges_miss_other_boxes() -> None:
    _, nodes, edges = parse(two_hundred_ops().to_svg())
    boxes = list(nodes.values())
    assert len(boxes) == 200 + 22  # the ops, the 20 variables, x and the constant 1.0
    for a, b in itertools.combinations(boxes, 2):
        assert not overlaps(a, b, gap=4.0), (a, b)
    for edge in edges:
        for p, q in zip(edge, edge[1:]):
            for b in boxes:  # the segment's ends are on box borders; its middle is never inside a box
                mx, my = (p[0] + q[0]) / 2, (p[1] + q[1]) / 2
                assert not (b.x < mx < b.x + b.width and b.y < my < b.y + b.height), (p, q, b.key)


def test_trees_and_chains_are_drawn_without_crossings() -> None:
    xs = [mt.tensor([float(i)]) for i in range(8)]
    c = mt.tensor([0.5])
    with mt.GradientTape() as tape:
        for x in [*xs, c]:
            tape.watch(x)
        level = [mt.exp(x) for x in xs]
        while len(level) > 1:  # a balanced tree of adds, its pairs made in a shuffled order
            level = [level[i] + level[i + 1] for i in range(0, len(level), 2)][::-1]
        chain = level[0]
        for _ in range(10):
            chain = mt.tanh(chain) * c  # long edges from c down to each mul
    _, nodes, edges = parse(tape.to_svg())
    assert crossings(edges) == 0
    assert len(nodes) == len(tape.operations) + 9


def test_empty_used_and_extreme_tapes_still_draw() -> None:
    empty = mt.GradientTape()
    root, nodes, _ = parse(empty.to_svg())
    assert nodes == {} and "no op recorded" in "".join(root.itertext())
    x = mt.tensor([1e308, -1e308, float("nan"), float("inf")])
    z = mt.zeros((0, 3))
    with mt.GradientTape() as tape:
        tape.watch([x, z])
        y = (x * 10.0).sum() + z.sum()
    _ = tape.gradient(y, x)
    root, nodes, _ = parse(tape.to_svg())
    assert nodes == {} and "used: records freed" in "".join(root.itertext())
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = (x * 10.0).sum() + z.sum()
    _ = tape.gradient(y, [x, z])
    _, nodes, _ = parse(tape.to_svg())
    texts = {n.key: n.text for n in nodes.values()}
    assert texts["op0"][2] == "[inf, -inf, nan, inf]", texts["op0"]  # four entries fit: each is shown
    assert any(t[2] == "[] (empty)" for t in texts.values())


def test_two_hundred_ops_draw_in_under_a_second() -> None:
    # The issue asks for this bound. It is generous (about 0.1 s here) and uses the best of three
    # runs, so a machine busy with other work does not fail it.
    tape = two_hundred_ops()
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        _ = tape.to_svg()
        best = min(best, time.perf_counter() - start)
    assert best < 1.0, f"to_svg() of 200 ops took {best:.2f} s"


# -- in a real browser --------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
no_browser = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="no headless browser here: install Debian's chromium and chromium-driver (.ci/run does)",
)

GEOMETRY = """
return Array.from(document.querySelectorAll("svg.mt-tape g.mt-node")).map(function (g) {
  var r = g.querySelector("rect").getBBox();
  var texts = Array.from(g.querySelectorAll("text")).map(function (t) {
    var b = t.getBBox(); return [b.x, b.y, b.width, b.height, parseFloat(getComputedStyle(t).fontSize)];
  });
  return [[r.x, r.y, r.width, r.height], texts];
});
"""


def decode_png(data: bytes) -> tuple[int, int, list[bytearray], int]:
    """Width, height, unfiltered rows and bytes per pixel of an 8-bit RGB/RGBA PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, bpp = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and colour in (2, 6) and chunk[12] == 0, "not an 8-bit, non-interlaced RGB(A) PNG"
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytearray] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(line)
        prev = line
    return width, height, rows, bpp


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    assert CHROMIUM is not None and CHROMEDRIVER is not None
    profile = tempfile.mkdtemp(prefix="microtape-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--no-first-run", "--window-size=1200,800",
                 "--hide-scrollbars", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@no_browser
@pytest.mark.slow  # a browser
@pytest.mark.parametrize("fit", [False, True], ids=["natural size", "fitted"])
def test_two_hundred_ops_render_readably_in_chromium(browser: webdriver.Chrome, tmp_path: Path, fit: bool) -> None:
    svg = two_hundred_ops().to_svg()
    style = "svg.mt-tape { width: 100vw; height: auto; display: block }" if fit else ""
    page = tmp_path / "tape.html"
    page.write_text(f"<!doctype html><html><head><style>body {{ margin: 0 }} {style}</style></head><body>{svg}</body></html>", encoding="utf-8")
    driver = browser
    driver.get(page.as_uri())
    if not fit:
        # Natural size: every line of text fits inside its box with the browser's real font,
        # at 11 px or more, and no two boxes overlap.
        boxes = driver.execute_script(GEOMETRY)
        assert len(boxes) == 222
        for (x, y, w, h), texts in boxes:
            for tx, ty, tw, th, size in texts:
                assert size >= 11
                assert x - 0.5 <= tx and tx + tw <= x + w + 0.5, f"text wider than its box: {(tx, tw)} in {(x, w)}"
                assert y - 0.5 <= ty and ty + th <= y + h + 0.5
        for (a, _), (b, _) in itertools.combinations(boxes, 2):
            assert not (a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3])
        return
    # Fitted to the window: the screenshot has ink in every column and every row band of the drawing.
    width, height, rows, bpp = decode_png(driver.get_screenshot_as_png())
    drawn_height = int(driver.execute_script("return document.querySelector('svg').getBoundingClientRect().height"))
    drawn_height = min(drawn_height, height)
    bands = 6
    ink = [[0] * bands for _ in range(bands)]
    for y in range(0, drawn_height, 2):
        line = rows[y]
        for x in range(0, width, 2):
            if min(line[x * bpp : x * bpp + 3]) < 200:  # darker than the white background and the pale fills
                ink[y * bands // drawn_height][x * bands // width] += 1
    assert all(sum(row) > 0 for row in ink), f"an empty horizontal band: {ink}"
    assert all(sum(ink[r][c] for r in range(bands)) > 0 for c in range(bands)), f"an empty vertical band: {ink}"
    assert sum(map(sum, ink)) > 2000, ink


@pytest.mark.parametrize("name", ["w\x01\x1b[31m", "<script>&'\"", "\ufffe\x7fname\x00\ud800"])
def test_any_name_leaves_the_svg_well_formed(name: str) -> None:
    """Control characters, lone surrogates and XML's non-characters print as their escapes, never raw."""
    w = mt.variable(mt.tensor([1.0, -2.0]), name=name)
    with mt.GradientTape() as tape:
        loss = mt.relu(w * 2.0).sum()
    picture = tape.to_svg(title=name)
    ET.fromstring(picture)  # raises on malformed XML
    assert "\\x1b" in picture or "\x1b" not in name
    assert not any(c in picture for c in "\x00\x01\x1b\x7f\ufffe")
