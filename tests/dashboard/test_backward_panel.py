"""The dashboard's Backward panel: ``dash.log_backward(steps)`` shows one backward pass as a table
(every text escaped) in the page, the saved report and the event stream, and as strict JSON in
``/data.json``; anything but backward steps is refused and records nothing."""

from __future__ import annotations

import http.client
import json

import pytest

import microtape as mt


def _steps(name: str = "x") -> list[mt.BackwardStep]:
    x, y = mt.scalar(2.0), mt.scalar(3.0)
    with mt.GradientTape() as tape:
        tape.watch([x, y])
        z = x * x + y * y
    return list(tape.backward_steps(z, {name: x, "y": y}))


def test_the_panel_shows_the_steps_as_a_table_in_the_page_and_the_report() -> None:
    dash = mt.Dashboard()
    assert "No backward pass logged yet" in dash.html()
    dash.log(0, loss=1.0)
    dash.log_backward(_steps())
    page, report = dash.html(live=True), dash._repr_html_()
    for text in (page, report):
        assert 'id="mt-backward"' in text and "<table>" in text
        assert text.count("<tr>") == 4  # the header and three VJPs: add, mul, mul
        assert "logged after step 0" in text and "x: 4.0, y: 6.0" in text
    assert set(dash.render()["charts"]) == {"loss", "grads", "ratio", "hist", "tensors"}  # the charts are unchanged


def test_every_text_is_escaped() -> None:
    dash = mt.Dashboard()
    steps = _steps("<img src=x onerror=alert(1)>")
    steps[0].where = '<script>alert("where")</script>'
    dash.log_backward(steps)
    drawn = dash.render()["backward"]
    assert "<script>" not in drawn and "<img" not in drawn
    assert "&lt;script&gt;" in drawn and "&lt;img src=x onerror=alert(1)&gt;" in drawn


def test_data_json_is_strict_json_even_with_nan_and_inf_gradients() -> None:
    x = mt.tensor([0.0, 4.0])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.sqrt(x).sum()
    with mt.Dashboard(port=0) as dash:
        dash.log_backward(tape.backward_steps(y, x))
        conn = http.client.HTTPConnection("127.0.0.1", dash.port, timeout=10)
        try:
            conn.request("GET", "/data.json")
            body = conn.getresponse().read().decode()
        finally:
            conn.close()
    data = json.loads(body, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
    rows = data["backward"]["rows"]
    assert [r["op"] for r in rows] == ["sum", "sqrt"] and data["backward"]["steps"] == 2
    assert rows[-1]["grads"] == "[inf, 0.25]" and rows[-1]["where"].rpartition(":")[0] == __file__


def test_a_long_pass_keeps_its_first_rows_and_says_how_many_are_left_out() -> None:
    x = mt.scalar(1.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(250):
            y = y * 1.0
    dash = mt.Dashboard()
    dash.log_backward(tape.backward_steps(y, x))
    assert len(dash.data()["backward"]["rows"]) == 200  # type: ignore[index]
    assert "50 more steps are left out." in dash.render()["backward"]


@pytest.mark.parametrize("bad", [3, ["not a step"], None])
def test_anything_but_steps_is_refused_and_records_nothing(bad: object) -> None:
    dash = mt.Dashboard()
    dash.log_backward(_steps())
    before = dash.data()["backward"]
    with pytest.raises(mt.InvalidArgumentError, match=r"log_backward\(\) needs the steps of a backward pass") as info:
        dash.log_backward(bad)  # type: ignore[arg-type]
    assert "hint: dash.log_backward(tape.backward_steps(loss, sources))" in str(info.value)
    assert dash.data()["backward"] == before
