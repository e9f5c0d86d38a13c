"""The words on the book's figures (titles, axes, legends), one table per language.

The chapters in ``tutorials/`` draw their plots
with the words of ``figure_words()``, so one chapter draws English figures
for the English edition and Russian ones for the Russian edition: the book's
build sets ``MICROTAPE_LANG`` to the edition's language (``docs/_ext/editions.py``)
and so does ``microtape tour --lang ru``. A figure's title is also its
description for readers who cannot see it (sphinx-gallery makes the image's alt
text from the titles), so every figure has one, written as a sentence.

Templates with ``{name}`` fields are filled in by the chapter with
:meth:`str.format`. Both tables have the same keys (a test checks it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

from .. import language
from ..i18n.messages import ENV

__all__ = ["ENVIRONMENT_VARIABLE", "FIGURE_WORDS", "figure_language", "figure_words"]

ENVIRONMENT_VARIABLE: Final = ENV
"""The environment variable that chooses the figures' language (``en`` or ``ru``): the command
line's own (``messages.ENV``), which the book's build and ``tour --lang`` set too."""

FIGURE_WORDS: Final[Mapping[str, Mapping[str, str]]] = {
    "en": {
        # shared
        "step": "step",
        "loss": "loss",
        "loss_log": "loss (log scale)",
        # chapter 0
        "ch0_title": "Gradient descent walks down the loss curve",
        # chapter 1
        "ch1_title": "One gradient step goes down along the tangent",
        "ch1_tangent": "tangent at w = {w:g}, slope {slope:g}",
        "ch1_step": "one step: w = {w:g}",
        # chapter 2
        "ch2_title": "Fitting y = 2x − 1: the loss falls steadily",
        # chapter 3
        "ch3_title": "The tape of the linear model, drawn by Graphviz",
        "ch3_constant": "constant: no gradient",
        # chapter 4
        "ch4_title": "The error of a numeric derivative depends on the step h",
        "ch4_forward": "forward difference",
        "ch4_central": "central difference",
        "ch4_rounding": "rounding wins:\nerror ≈ ε/h",
        "ch4_truncation": "truncation wins:\nerror ≈ h or h²",
        "ch4_xlabel": "step h",
        "ch4_ylabel": "|numeric − exact| derivative of exp at 1",
        # chapter 5
        "ch5_title": "Without tidy every step leaves tensors behind; with tidy none stay",
        "ch5_xlabel": "training step",
        "ch5_ylabel": "new live tensors (mt.memory().num_tensors)",
        "ch5_without": "without tidy",
        "ch5_with": "with tidy",
        # chapter 6
        "ch6_sgd_title": "Plain SGD at four learning rates",
        "ch6_optimizers_title": "Seven optimizers on the linear model",
        "ch6_rnn_title": "The gradient reaching each time step of a 20-step RNN",
        "ch6_rnn_xlabel": "time step t",
        "ch6_rnn_ylabel": "‖∂loss/∂h_t‖ (log scale)",
        "ch6_gain": "gain {gain}",
        "ch6_gain_loud": "gain {gain}, loud inputs",
        "ch6_entries": "the {size} entries of {name}",
        "ch6_spread_title": "How the entries of the two gradients are spread",
        "ch6_value": "value",
        "ch6_count": "count",
        "ch6_no_clipping": "no clipping",
        "ch6_training_loss": "Training loss",
        "ch6_norm_ylabel": "global norm before clipping",
        "ch6_norm_title": "Gradient norm",
        "ch6_clip_title": "Training the RNN without and with clipping by global norm",
        # chapter 7
        "ch7_title": "mt.profile: the forward pass (blue), then the backward pass (orange)",
        "ch7_ylabel": "bytes added",
        # chapter 8
        "ch8_title": "Binary cross-entropy at label 0, minus the exact loss",
        "ch8_probabilities": "−log(1 − sigmoid(z)): on probabilities",
        "ch8_logits": "sigmoid_cross_entropy: on logits",
        "ch8_xlabel": "logit z",
        "ch8_ylabel": "computed loss − exact loss",
        # chapter 9
        "ch9_fd_title": "A central difference of exp at 1 in float64 and in float32",
        "ch9_float64": "float64 (Python floats)",
        "ch9_float32": "float32 (every value rounded)",
        "ch9_fd_ylabel": "relative error of the central difference",
        "ch9_taylor_title": "The Taylor test: order 2 only with the right gradient",
        "ch9_no_grad": "|f(x + hv) − f(x)|: order 1",
        "ch9_right": "right gradient: order 2",
        "ch9_wrong": "gradient 1% off: order 1",
        "ch9_taylor_ylabel": "remainder",
    },
    "ru": {
        "step": "шаг",
        "loss": "потери",
        "loss_log": "потери (логарифмическая шкала)",
        "ch0_title": "Градиентный спуск идёт вниз по кривой потерь",
        "ch1_title": "Один шаг по градиенту идёт вниз вдоль касательной",
        "ch1_tangent": "касательная в w = {w:g}, наклон {slope:g}",
        "ch1_step": "один шаг: w = {w:g}",
        "ch2_title": "Подгонка y = 2x − 1: потери ровно убывают",
        "ch3_title": "Лента градиентов линейной модели, нарисованная Graphviz",
        "ch3_constant": "константа: градиента нет",
        "ch4_title": "Ошибка численной производной зависит от шага h",
        "ch4_forward": "разность вперёд",
        "ch4_central": "центральная разность",
        "ch4_rounding": "побеждает округление:\nошибка ≈ ε/h",
        "ch4_truncation": "побеждает ошибка\nусечения: ≈ h или h²",
        "ch4_xlabel": "шаг h",
        "ch4_ylabel": "|численная − точная| производная exp в 1",
        "ch5_title": "Без tidy каждый шаг оставляет тензоры,\nс tidy не остаётся ни одного",
        "ch5_xlabel": "шаг обучения",
        "ch5_ylabel": "новые живые тензоры\n(mt.memory().num_tensors)",
        "ch5_without": "без tidy",
        "ch5_with": "с tidy",
        "ch6_sgd_title": "Обычный SGD при четырёх скоростях обучения",
        "ch6_optimizers_title": "Семь оптимизаторов на линейной модели",
        "ch6_rnn_title": "Градиент, доходящий до каждого шага RNN из 20 шагов",
        "ch6_rnn_xlabel": "шаг по времени t",
        "ch6_rnn_ylabel": "‖∂loss/∂h_t‖ (логарифмическая шкала)",
        "ch6_gain": "gain = {gain}",
        "ch6_gain_loud": "gain = {gain}, входы полного размера",
        "ch6_entries": "элементы {name} (всего {size})",
        "ch6_spread_title": "Как распределены элементы двух градиентов",
        "ch6_value": "значение",
        "ch6_count": "количество",
        "ch6_no_clipping": "без обрезки",
        "ch6_training_loss": "Функция потерь при обучении",
        "ch6_norm_ylabel": "глобальная норма до обрезки",
        "ch6_norm_title": "Норма градиента",
        "ch6_clip_title": "Обучение RNN без обрезки и с обрезкой по глобальной норме",
        "ch7_title": "mt.profile: прямой проход (синий), затем обратный (оранжевый)",
        "ch7_ylabel": "добавлено байт",
        "ch8_title": "Бинарная перекрёстная энтропия при метке 0 минус точные потери",
        "ch8_probabilities": "−log(1 − sigmoid(z)): на вероятностях",
        "ch8_logits": "sigmoid_cross_entropy: на логитах",
        "ch8_xlabel": "логит z",
        "ch8_ylabel": "вычисленные потери − точные потери",
        "ch9_fd_title": "Центральная разность exp в точке 1 во float64 и во float32",
        "ch9_float64": "float64 (числа Python)",
        "ch9_float32": "float32 (каждое значение округлено)",
        "ch9_fd_ylabel": "относительная ошибка центральной разности",
        "ch9_taylor_title": "Тест Тейлора: порядок 2 только у верного градиента",
        "ch9_no_grad": "|f(x + hv) − f(x)|: порядок 1",
        "ch9_right": "верный градиент: порядок 2",
        "ch9_wrong": "градиент неверен на 1%: порядок 1",
        "ch9_taylor_ylabel": "остаток",
    },
}
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
