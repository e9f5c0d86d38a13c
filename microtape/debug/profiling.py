"""``profile``: every op a function runs, with the tensors and bytes it added (``tf.profile``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..engine import arena
from ..engine.arena import TensorBase
from ..engine.memory import memory
from ..engine.primitive import Op
from ..engine.tensor import BYTES_PER_ENTRY, Grads, Tensor
from ..engine.types import Shape
from ..views.html import record_html
from ..errors import N_, InvalidArgumentError, explain
from ..language import tr

__all__ = ["KernelInfo", "ProfileInfo", "profile"]


@dataclass(frozen=True, slots=True)
class KernelInfo:
    """One op run inside :func:`profile`."""

    name: str
    input_shapes: tuple[Shape, ...]
    output_shapes: tuple[Shape, ...]
    bytes_added: int
    tensors_added: int
    total_bytes: int
    total_tensors: int
    time_ms: float


@dataclass(frozen=True, slots=True)
class ProfileInfo:
    """What :func:`profile` reports (TF.js ``tf.profile`` fields, in snake_case).

    Examples:
        >>> info = mt.profile(lambda: mt.tidy(lambda: mt.ones((4,)).sum()))
        >>> info.kernel_names, info.new_tensors, info.kernels[0].output_shapes
        (['sum'], 1, ((),))
    """

    new_tensors: int
    new_bytes: int
    peak_bytes: int
    kernels: list[KernelInfo]
    result: object
    _repr_html_ = record_html  # Jupyter shows the fields as tables

    @property
    def kernel_names(self) -> list[str]:
        """Names of the ops that ran, in order."""
        return [k.name for k in self.kernels]

    def __str__(self) -> str:
        lines = [
            f"new_tensors={self.new_tensors} new_bytes={self.new_bytes} peak_bytes={self.peak_bytes}",
            f"{tr(N_('kernel')):<14} {tr(N_('inputs')):<24} {tr(N_('output')):<10} {tr(N_('+bytes')):>7} {tr(N_('total')):>7} {tr(N_('ms')):>8}",
        ]
        for k in self.kernels:
            ins = ", ".join(str(s) for s in k.input_shapes)
            outs = ", ".join(str(s) for s in k.output_shapes)
            lines.append(
                f"{k.name:<14} {ins:<24} {outs:<10} {k.bytes_added:>7} {k.total_bytes:>7} {k.time_ms:>8.3f}"
            )
        return "\n".join(lines)


class _Profiler:
    def __init__(self) -> None:
        info = memory()
        self.tensors = info.num_tensors
        self.bytes = info.num_bytes
        self.start_tensors, self.start_bytes = self.tensors, self.bytes
        self.peak = self.bytes
        self.kernels: list[KernelInfo] = []
        self.mark_tensors, self.mark_bytes = self.tensors, self.bytes

    def on_vjp(self, op: Op, inputs: tuple[Tensor, ...], out: Tensor, dxs: Grads) -> None:
        pass  # a VJP's own ops were reported one by one

    def on_create(self, tensor: TensorBase) -> None:
        self.tensors += 1
        self.bytes += BYTES_PER_ENTRY * tensor.size
        self.peak = max(self.peak, self.bytes)

    def on_free(self, tensor: TensorBase) -> None:
        self.tensors -= 1
        self.bytes -= BYTES_PER_ENTRY * tensor.size

    def on_op(self, op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor, seconds: float) -> None:
        self.kernels.append(
            KernelInfo(
                name=op.name,
                input_shapes=tuple(x.shape for x in inputs),
                output_shapes=(out.shape,),
                bytes_added=self.bytes - self.mark_bytes,
                tensors_added=self.tensors - self.mark_tensors,
                total_bytes=self.bytes,
                total_tensors=self.tensors,
                time_ms=seconds * 1000.0,
            )
        )
        self.mark_tensors, self.mark_bytes = self.tensors, self.bytes


def profile(fn: Callable[[], object]) -> ProfileInfo:
    """Run ``fn`` and report tensors, bytes and every op it ran (``tf.profile``).

    Examples:
        >>> x = mt.tensor([1.0, 2.0, 3.0])
        >>> info = mt.profile(lambda: mt.tidy(lambda: (x * x).sum()))
        >>> info.new_tensors, info.new_bytes, info.kernel_names
        (1, 8, ['mul', 'sum'])
        >>> info.peak_bytes - mt.memory().num_bytes + info.new_bytes >= 24
        True
    """
    if not callable(fn):
        raise InvalidArgumentError(
            explain(
                N_('profile() needs a function, got {0}.').format(type(fn).__name__),
                N_('profile runs the function and watches what it allocates.'),
                N_('write mt.profile(lambda: model(x)).'),
            ),
            value=fn,
        )
    prof = _Profiler()
    with arena.observing(prof):
        result = fn()
    return ProfileInfo(
        new_tensors=prof.tensors - prof.start_tensors,
        new_bytes=prof.bytes - prof.start_bytes,
        peak_bytes=prof.peak,
        kernels=prof.kernels,
        result=result,
    )
