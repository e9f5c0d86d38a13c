"""The live training page's cost: slowdown with 0 vs 20 viewers, and memory over 100,000 steps.

1. **Slowdown.** The demo's workload (chapter 6's recurrent net, one SGD step
   plus ``dash.log`` per step) runs inside ``async with mt.Dashboard(port=0)``,
   awaiting ``mt.next_frame()`` after each step, as the book teaches. We time
   blocks of steps with no viewer, with 20 viewers that read the event stream
   (like 20 browser tabs), and with 20 that connect and never read (stalled
   tabs). The viewers run in a child process. Blocks alternate (A B C, B C A,
   ...) so a slow phase of the shared machine hits every mode, and we report
   the median time per step of each and the ratios to "no viewer", in wall
   time and in this process's CPU time (which includes the server's work),
   and the server's own account of the CPU time it spent drawing and pushing
   updates, per step (noise-free: it is the cost itself, not a difference).
2. **Memory.** 100,000 calls of ``dash.log`` (loss, two gradients, one
   variable) with no server: tracemalloc's current size after
   ``gc.collect()`` at 1,000, 10,000 and 100,000 steps, and the points kept.
   Bounded means the last two are about equal.

Run: ``python bench/dashboard.py [--quick]``.

Measured on the shared 2-core development machine (Python 3.11), medians of
9 blocks of 300 steps per mode::

    mode            wall/step   ratio   cpu/step   ratio  server cpu/step   share
    0 viewers         10.55ms   1.000     6.98ms   1.000          0.000ms    0.0%
    20 reading        10.64ms   1.009     7.14ms   1.022          0.097ms    1.4%
    20 stalled        10.31ms   0.977     7.15ms   1.023          0.088ms    1.3%

        steps      traced  points kept   (at most 512 per series)
        1,000     134.0kB        3,000
       10,000     100.3kB        1,878
       50,000     121.8kB        2,346
      100,000     122.1kB        2,346

Twenty viewers cost about 2% of a step of this small net (the server's own
account says 1.4%: drawing the charts twice a second and writing them out);
wall-time ratios move by ±5% from run to run on this machine. Memory stops
growing once every series is full.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import random
import selectors
import socket
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import microtape as mt  # noqa: E402 - after the path set-up

T, HIDDEN, BATCH = 20, 8, 16
Step = Callable[[], tuple[mt.Tensor, dict[str, mt.Tensor]]]
"""One training step: the loss and the gradients by parameter name."""


def viewers(port: int, count: int, read: bool) -> None:
    """Child process: hold ``count`` event streams open (reading them, or not) until stdin closes."""
    socks = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        if not read:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        socks.append(s)
    print("connected", flush=True)
    sel = selectors.DefaultSelector()
    sel.register(sys.stdin, selectors.EVENT_READ)
    if read:
        for s in socks:
            sel.register(s, selectors.EVENT_READ)
    received = 0
    while True:
        for key, _ in sel.select():
            if key.fileobj is sys.stdin:
                print(received, flush=True)
                return
            data = key.fileobj.recv(1 << 16)  # type: ignore[union-attr]  # a socket
            received += len(data)
            if not data:
                sel.unregister(key.fileobj)


def make_step() -> tuple[list[mt.Variable], Step]:
    rng = random.Random(0)
    inputs = [mt.keep(mt.tensor([rng.uniform(-1, 1) for _ in range(BATCH)], shape=(BATCH, 1))) for _ in range(T)]
    scale = 1 / math.sqrt(HIDDEN)
    params = [mt.variable(mt.random_normal((HIDDEN, HIDDEN), stddev=scale, seed=2)),
              mt.variable(mt.random_normal((1, HIDDEN), seed=3)),
              mt.variable(mt.random_normal((HIDDEN, 1), stddev=scale, seed=4))]
    opt = mt.train.sgd(0.05)

    def loss() -> mt.Tensor:
        h = mt.zeros((BATCH, HIDDEN))
        for x_t in inputs:
            h = mt.tanh(h @ params[0] + x_t @ params[1])
        return ((h @ params[2] - inputs[0]) ** 2).mean()

    def step() -> tuple[mt.Tensor, dict[str, mt.Tensor]]:
        value, grads = mt.variable_grads(loss)
        gs, _ = mt.clip_by_global_norm([grads[p] for p in params], 1.0)
        opt.apply_gradients(list(zip(gs, params)))
        return value, {n: grads[p] for n, p in zip("WUV", params)}

    return params, step


async def timed_block(dash: mt.Dashboard, params: list[mt.Variable], step: Step, start: int, n: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(start, start + n):
        value, grads = mt.tidy(step)
        dash.log(i, loss=value, grads=grads, variables=dict(zip("WUV", params)))
        mt.dispose([value, *grads.values()])
        await mt.next_frame()
    return (time.perf_counter() - wall) / n, (time.process_time() - cpu) / n


async def slowdown(blocks: int, per_block: int) -> dict[str, list[tuple[float, float, float]]]:
    """Per mode, one (wall, cpu, server cpu) time per step for each block."""
    params, step = make_step()
    results: dict[str, list[tuple[float, float, float]]] = {m: [] for m in ("0 viewers", "20 reading", "20 stalled")}
    async with mt.Dashboard("bench", port=0) as dash:
        server = dash._server  # the server's own CPU account: read, never changed
        assert server is not None
        counter = 0
        modes = list(results)
        for b in range(blocks):
            for mode in modes[b % 3:] + modes[: b % 3]:
                child = None
                if mode != "0 viewers":
                    child = subprocess.Popen(
                        [sys.executable, __file__, "--viewers", str(dash.port), "20", "read" if "reading" in mode else "stall"],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                    )
                    assert child.stdout is not None
                    ready = asyncio.get_running_loop().run_in_executor(None, child.stdout.readline)
                    while not ready.done():
                        await asyncio.sleep(0.01)  # serve the viewers while they connect
                    await asyncio.sleep(0.5)
                busy = server.busy
                wall, cpu = await timed_block(dash, params, step, counter, per_block)
                results[mode].append((wall, cpu, (server.busy - busy) / per_block))
                counter += per_block
                if child is not None:
                    assert child.stdin is not None
                    child.stdin.close()
                    child.wait(timeout=10)
                    while dash.viewers:
                        await asyncio.sleep(0.05)
    mt.dispose(params)
    return results


def memory_run(steps: int) -> list[tuple[int, int, int]]:
    dash = mt.Dashboard("memory")
    w = mt.variable(mt.tensor([1.0, 2.0, 3.0]), name="bench_dash_w")
    rows = []
    tracemalloc.start()
    for i in range(steps):
        grads = {"w": mt.tensor([1.0 / (i + 1), 2.0, 3.0]), "b": mt.tensor([0.5])}
        mt.tidy(lambda: w.assign_sub(grads["w"] * 0.001))
        dash.log(i, loss=1.0 / (i + 1), grads=grads, variables=[w])
        mt.dispose(list(grads.values()))
        if i + 1 in (1_000, 10_000, 50_000, 100_000, steps):
            gc.collect()
            rows.append((i + 1, tracemalloc.get_traced_memory()[0], dash.num_points()))
    tracemalloc.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--viewers", nargs=3, metavar=("PORT", "N", "MODE"))
    args = parser.parse_args()
    if args.viewers:
        viewers(int(args.viewers[0]), int(args.viewers[1]), args.viewers[2] == "read")
        return
    blocks, per_block, steps = (3, 30, 5_000) if args.quick else (9, 300, 100_000)
    results = asyncio.run(slowdown(blocks, per_block))
    base_wall = statistics.median(r[0] for r in results["0 viewers"])
    base_cpu = statistics.median(r[1] for r in results["0 viewers"])
    print(f"slowdown of a training step ({blocks} blocks of {per_block} steps per mode, medians)")
    print(f"{'mode':<14}{'wall/step':>11}{'ratio':>8}{'cpu/step':>11}{'ratio':>8}{'server cpu/step':>17}{'share':>8}")
    for mode, rows in results.items():
        w, c, p = (statistics.median(r[i] for r in rows) for i in range(3))
        print(f"{mode:<14}{w * 1e3:>9.2f}ms{w / base_wall:>8.3f}{c * 1e3:>9.2f}ms{c / base_cpu:>8.3f}"
              f"{p * 1e3:>15.3f}ms{p / base_cpu:>8.1%}")
    print(f"\nmemory of dash.log over {steps:,} steps (no server; tracemalloc after gc.collect())")
    print(f"{'steps':>9}{'traced':>12}{'points kept':>13}   (at most {mt.Dashboard().max_points} per series)")
    for n, size, points in memory_run(steps):
        print(f"{n:>9,}{size / 1024:>10.1f}kB{points:>13,}")


if __name__ == "__main__":
    main()
