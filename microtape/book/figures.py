"""The words on the book's figures (titles, axes, legends), in English and, from the gettext catalog, in Russian.

The chapters in ``tutorials/`` draw their plots
with the words of ``figure_words()``, so one chapter draws English figures
for the English edition and Russian ones for the Russian edition: the book's
build sets ``MICROTAPE_LANG`` to the edition's language (``docs/_ext/editions.py``)
and so does ``microtape tour --lang ru``. A figure's title is also its
description for readers who cannot see it (sphinx-gallery makes the image's alt
text from the titles), so every figure has one, written as a sentence.

Templates with ``{name}`` fields are filled in by the chapter with
:meth:`str.format`. The English table's texts are the catalog's msgids, so a
Russian figure's words live where every other Russian message does
(``microtape/locale/ru/LC_MESSAGES/microtape.po``), and the catalog check
fails on a figure word without its Russian.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Final

from .. import language
from ..language import N_
from ..i18n.messages import ENV

__all__ = ["ENVIRONMENT_VARIABLE", "FIGURE_WORDS", "figure_language", "figure_words"]

ENVIRONMENT_VARIABLE: Final = ENV
"""The environment variable that chooses the figures' language (``en`` or ``ru``): the command
line's own (``messages.ENV``), which the book's build and ``tour --lang`` set too."""

_ENGLISH: Final[Mapping[str, str]] = {
    # shared
    "step": N_("step"),
    "loss": N_("loss"),
    "loss_log": N_("loss (log scale)"),
    # chapter 0
    "ch0_title": N_("Gradient descent walks down the loss curve"),
    # chapter 1
    "ch1_title": N_("One gradient step goes down along the tangent"),
    "ch1_tangent": N_("tangent at w = {w:g}, slope {slope:g}"),
    "ch1_step": N_("one step: w = {w:g}"),
    # chapter 2
    "ch2_title": N_("Fitting y = 2x − 1: the loss falls steadily"),
    # chapter 3
    "ch3_title": N_("The tape of the linear model, drawn by Graphviz"),
    "ch3_constant": N_("constant: no gradient"),
    # chapter 4
    "ch4_title": N_("The error of a numeric derivative depends on the step h"),
    "ch4_forward": N_("forward difference"),
    "ch4_central": N_("central difference"),
    "ch4_rounding": N_("rounding wins:\nerror ≈ ε/h"),
    "ch4_truncation": N_("truncation wins:\nerror ≈ h or h²"),
    "ch4_xlabel": N_("step h"),
    "ch4_ylabel": N_("|numeric − exact| derivative of exp at 1"),
    # chapter 5
    "ch5_title": N_("Without tidy every step leaves tensors behind; with tidy none stay"),
    "ch5_xlabel": N_("training step"),
    "ch5_ylabel": N_("new live tensors (mt.memory().num_tensors)"),
    "ch5_without": N_("without tidy"),
    "ch5_with": N_("with tidy"),
    # chapter 6
    "ch6_sgd_title": N_("Plain SGD at four learning rates"),
    "ch6_optimizers_title": N_("Seven optimizers on the linear model"),
    "ch6_rnn_title": N_("The gradient reaching each time step of a 20-step RNN"),
    "ch6_rnn_xlabel": N_("time step t"),
    "ch6_rnn_ylabel": N_("‖∂loss/∂h_t‖ (log scale)"),
    "ch6_gain": N_("gain {gain}"),
    "ch6_gain_loud": N_("gain {gain}, loud inputs"),
    "ch6_entries": N_("the {size} entries of {name}"),
    "ch6_spread_title": N_("How the entries of the two gradients are spread"),
    "ch6_value": N_("value"),
    "ch6_count": N_("count"),
    "ch6_no_clipping": N_("no clipping"),
    "ch6_training_loss": N_("Training loss"),
    "ch6_norm_ylabel": N_("global norm before clipping"),
    "ch6_norm_title": N_("Gradient norm"),
    "ch6_clip_title": N_("Training the RNN without and with clipping by global norm"),
    # chapter 7
    "ch7_title": N_("mt.profile: the forward pass (blue), then the backward pass (orange)"),
    "ch7_ylabel": N_("bytes added"),
    # chapter 8
    "ch8_title": N_("Binary cross-entropy at label 0, minus the exact loss"),
    "ch8_probabilities": N_("−log(1 − sigmoid(z)): on probabilities"),
    "ch8_logits": N_("sigmoid_cross_entropy: on logits"),
    "ch8_xlabel": N_("logit z"),
    "ch8_ylabel": N_("computed loss − exact loss"),
    # chapter 9
    "ch9_fd_title": N_("A central difference of exp at 1 in float64 and in float32"),
    "ch9_float64": N_("float64 (Python floats)"),
    "ch9_float32": N_("float32 (every value rounded)"),
    "ch9_fd_ylabel": N_("relative error of the central difference"),
    "ch9_taylor_title": N_("The Taylor test: order 2 only with the right gradient"),
    "ch9_no_grad": N_("|f(x + hv) − f(x)|: order 1"),
    "ch9_right": N_("right gradient: order 2"),
    "ch9_wrong": N_("gradient 1% off: order 1"),
    "ch9_taylor_ylabel": N_("remainder"),
}
"""The figures' words in English, the catalog's msgids (``microtape/locale/<lang>/LC_MESSAGES/microtape.po``
holds the other languages): key -> text, ``{field}`` templates filled by the chapter."""


class _Catalog(Mapping[str, str]):
    """The English table read through the gettext catalog of one language: the same keys, each text translated."""

    def __init__(self, lang: language.Language) -> None:
        self.lang = lang

    def __getitem__(self, key: str) -> str:
        return language.tr(_ENGLISH[key], self.lang)

    def __iter__(self) -> Iterator[str]:
        return iter(_ENGLISH)

    def __len__(self) -> int:
        return len(_ENGLISH)


FIGURE_WORDS: Final[Mapping[str, Mapping[str, str]]] = {"en": _ENGLISH, "ru": _Catalog("ru")}
"""The figures' words: language code -> key -> text (``{field}`` templates filled by the chapter)."""


def figure_language(lang: str | None = None) -> str:
    """The language the figures are drawn in: ``lang``, else ``mt.set_language``'s, else ``$MICROTAPE_LANG``, else English.

    A language with no table (or a variant such as ``ru_RU``) falls back to
    its base language, then to English, so a figure is always drawn.

    Examples:
        >>> from microtape.book.figures import figure_language
        >>> figure_language("ru"), figure_language("ru_RU.UTF-8"), figure_language("de")
        ('ru', 'ru', 'en')
    """
    picked = language.chosen()
    chosen = (lang if lang is not None else picked if picked is not None else os.environ.get(ENVIRONMENT_VARIABLE, "")) or "en"
    base = chosen.replace("-", "_").split("_")[0].split(".")[0].lower()
    return base if base in FIGURE_WORDS else "en"


def figure_words(lang: str | None = None) -> Mapping[str, str]:
    """The words of the figures in ``lang`` (default: see :func:`figure_language`).

    Examples:
        >>> from microtape.book.figures import figure_words
        >>> figure_words("en")["step"], figure_words("ru")["step"]
        ('step', 'шаг')
        >>> figure_words("ru")["ch1_step"].format(w=2.5)
        'один шаг: w = 2.5'
    """
    return FIGURE_WORDS[figure_language(lang)]
