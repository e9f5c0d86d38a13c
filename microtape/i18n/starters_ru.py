"""The Russian of the starters' comments, function docstrings and TODO messages.

``book/statements.py`` writes a Russian starter
(``exercises DIR --lang ru``): the task statement (the module docstring)
comes from the book's exercises catalog, and every other text a student
reads in the file (comments, function docstrings, the ``TODO`` messages of
``NotImplementedError``) from ``STARTERS_RU``, keyed by its English
text. The code itself is not touched. A comment that is code
(``# grad_fn(dy, saved)``) has no entry and stays as it is.
``russian.py`` uses the same table for the TODO messages the grader prints.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CODE_COMMENTS", "STARTERS_RU"]

CODE_COMMENTS: Final[frozenset[str]] = frozenset({"grad_fn(dy)", "grad_fn(dy, saved)", "y = 2x - 1"})
"""Comments that are code or a formula, the same in every language."""

STARTERS_RU: Final[dict[str, str]] = {
    # ex00_gradient_by_hand
    "the grader reads this: do not change it": "это читает проверка: не меняйте",
    "f(x) = x³ - 2x, entry by entry. Given: do not change it.": "f(x) = x³ - 2x, поэлементно. Дано: не меняйте.",
    "Return f'(x), worked out by hand, as a float.": "Верните f'(x), выведенную вручную, как число float.",
    "Return f'(x) for every entry of x, computed by microtape.": "Верните f'(x) для каждого элемента x, вычисленную microtape.",
    "Take ``steps`` steps x ← x - lr·f'(x) from ``x0``; return the final x.": "Сделайте ``steps`` шагов x ← x - lr·f'(x) из ``x0``; верните итоговый x.",
    "TODO 1: return the derivative of x**3 - 2*x at x, worked out on paper": "TODO 1: верните производную x**3 - 2*x в точке x, выведенную на бумаге",
    "TODO 2: return f'(x) for every entry of x, computed by microtape from the module's f":
        "TODO 2: верните f'(x) для каждого элемента x, вычисленную microtape из функции f этого модуля",
    "TODO 3: start at x0, take `steps` gradient-descent steps, return the final x":
        "TODO 3: начните с x0, сделайте `steps` шагов градиентного спуска, верните итоговый x",
    # ex01_variables_sgd
    "Return a trainable variable holding ``values``.": "Верните обучаемую переменную со значениями ``values``.",
    "Return a scalar variable at 0 that no optimizer may train.": "Верните скалярную переменную, равную 0, которую не может обучать ни один оптимизатор.",
    "Set w to w - lr·grad, changing the variable itself.": "Запишите в w значение w - lr·grad, меняя саму переменную.",
    "Add 1 to the counter, in place.": "Прибавьте 1 к счётчику на месте.",
    "TODO 1: return a new trainable variable holding values": "TODO 1: верните новую обучаемую переменную со значениями values",
    "TODO 2: return a scalar variable that starts at 0 and that no optimizer may train":
        "TODO 2: верните скалярную переменную, которая начинается с 0 и которую не может обучать ни один оптимизатор",
    "TODO 3: change w itself to w - lr * grad (the caller's variable must change)":
        "TODO 3: измените саму w на w - lr * grad (должна измениться переменная вызывающего)",
    "TODO 4: add 1 to the counter, changing the variable itself": "TODO 4: прибавьте 1 к счётчику, меняя саму переменную",
    # ex02_linear_model
    "Mean squared error of the prediction ``w*X + b`` against ``Y``.": "Среднеквадратичная ошибка предсказания ``w*X + b`` относительно ``Y``.",
    "Return (dL/dw, dL/db); nothing else made here may stay alive.": "Верните (dL/dw, dL/db); ничто другое, созданное здесь, не должно остаться живым.",
    "Fit w and b from 0 with ``steps`` SGD steps; return the final (w, b).": "Подгоните w и b от 0 за ``steps`` шагов SGD; верните итоговые (w, b).",
    "TODO 1: return the mean squared error of the prediction w*X + b against Y":
        "TODO 1: верните среднеквадратичную ошибку предсказания w*X + b относительно Y",
    "TODO 2: return (dL/dw, dL/db) from mt.variable_grads, leaving only those two tensors alive":
        "TODO 2: верните (dL/dw, dL/db) из mt.variable_grads, оставив живыми только эти два тензора",
    "TODO 3: fit w and b from 0 with `steps` SGD steps, leaving no tensor behind; return (w, b) as floats":
        "TODO 3: подгоните w и b от 0 за `steps` шагов SGD, не оставив тензоров; верните (w, b) как числа float",
    # ex02b_item_cuts_the_graph
    "made by w = 0.6, b = 0.5": "получены при w = 0.6, b = 0.5",
    "The model A·tanh(w)·x + b.": "Модель A·tanh(w)·x + b.",
    "Mean squared error of the model on X, Y.": "Среднеквадратичная ошибка модели на X, Y.",
    "Plain SGD from w = b = 0; returns the final (w, b).": "Обычный SGD от w = b = 0; возвращает итоговые (w, b).",
    # ex03_second_derivative
    "Return f''(x), entry by entry, with two nested GradientTapes.": "Верните f''(x), поэлементно, с помощью двух вложенных GradientTape.",
    "SGD on x² + y² from (x0, y0); return the final (x, y).": "SGD на x² + y² из (x0, y0); верните итоговые (x, y).",
    "TODO 1: return f''(x) computed with two nested GradientTapes": "TODO 1: верните f''(x), вычисленную с двумя вложенными GradientTape",
    "TODO 2: minimise x² + y² from (x0, y0) with two variables and a GradientTape; return (x, y) as floats":
        "TODO 2: минимизируйте x² + y² из (x0, y0) с двумя переменными и GradientTape; верните (x, y) как числа float",
    # ex03b_unwatched_tensor
    "sum(tanh(x @ W) @ V) for a batch x of shape (n, 2).": "sum(tanh(x @ W) @ V) для мини-батча x формы (n, 2).",
    "d model(x) / dx, with the shape of x.": "d model(x) / dx, формы x.",
    "The gradients of model(x) with respect to x, W and V.": "Градиенты model(x) по x, W и V.",
    # ex04_softplus_vjp
    "softplus(x) = log(1 + eˣ), with a hand-written gradient.": "softplus(x) = log(1 + eˣ) с градиентом, написанным вручную.",
    "Check softplus's first and second derivatives against finite differences.": "Проверьте первую и вторую производные softplus конечными разностями.",
    "TODO 2: return the gradient checker's report on softplus, first and second derivatives, at 3 or more points":
        "TODO 2: верните отчёт проверки градиентов для softplus, первой и второй производных, в 3 или более точках",
    "TODO 1: return [dy times the derivative of softplus at x], written with microtape ops":
        "TODO 1: верните [dy, умноженный на производную softplus в x], записанный операциями microtape",
    # ex04b_find_the_bug
    "TODO 1: the op name that mt.check_grads(model, [W, X]).culprit prints":
        "TODO 1: имя операции, которое печатает mt.check_grads(model, [W, X]).culprit",
    "f's save: keeps tensors the VJP reads": "save функции f: сохраняет тензоры, которые читает VJP",
    "the VJP reads s; unsaved, it would be disposed when swish returns": "VJP читает s; без сохранения он был бы освобождён при возврате из swish",
    "the VJP reads t; unsaved, it would be disposed when scaled_tanh returns": "VJP читает t; без сохранения он был бы освобождён при возврате из scaled_tanh",
    "the VJP reads r; unsaved, it would be disposed when smooth_abs returns": "VJP читает r; без сохранения он был бы освобождён при возврате из smooth_abs",
    "swish(x) = x·sigmoid(x).": "swish(x) = x·sigmoid(x).",
    "2·tanh(x).": "2·tanh(x).",
    "sqrt(x² + 1) - 1, a smooth |x|.": "sqrt(x² + 1) - 1, гладкий |x|.",
    "A tiny network: mean(smooth_abs(scaled_tanh(swish(x @ w)))).": "Крошечная сеть: mean(smooth_abs(scaled_tanh(swish(x @ w)))).",
    # ex04c_broadcast_vjp
    "x - b, with b of shape (columns,) broadcast over the rows of x.": "x - b, где b формы (столбцы,) транслируется по строкам x.",
    "Mean of the squared centred values: smallest when b is the column means.": "Среднее квадратов центрированных значений: наименьшее, когда b — средние столбцов.",
    # ex04d_nan_hunt
    "the inputs are multiplied by this: large logits": "на это умножаются входы: большие логиты",
    "log(Σ exp(z)) over the last axis, one value per row, shape (rows, 1).": "log(Σ exp(z)) по последней оси, по значению на строку, форма (строки, 1).",
    "Cross-entropy of softmax(SCALE · X @ w) against LABELS.": "Перекрёстная энтропия softmax(SCALE · X @ w) относительно LABELS.",
    "Plain SGD from small weights; returns the loss of every step.": "Обычный SGD от малых весов; возвращает потери каждого шага.",
    # ex04e_wrong_factor
    "TODO 1: the op name, as explain_gradient's table prints it": "TODO 1: имя операции, как его печатает таблица explain_gradient",
    "TODO 1: the local derivative the table shows for that op": "TODO 1: локальная производная, которую таблица показывает для этой операции",
    "x³.": "x³.",
    "x / (1 + |x|), a smooth step from -1 to 1.": "x / (1 + |x|), гладкая ступенька от -1 до 1.",
    "The sum of 2·softsign(x³).": "Сумма 2·softsign(x³).",
    # ex05_stop_the_leak
    "TODO 1: this step is right, but every call leaves tensors alive; make it leave none.":
        "TODO 1: этот шаг верен, но каждый вызов оставляет живые тензоры; сделайте так, чтобы не оставалось ни одного.",
    "TODO 2: this leaks every tensor that predict and mse make; make it leave none.":
        "TODO 2: здесь утекает каждый тензор, созданный predict и mse; сделайте так, чтобы не оставалось ни одного.",
    "A linear model: x @ w.": "Линейная модель: x @ w.",
    "Mean squared error.": "Среднеквадратичная ошибка.",
    "One SGD step on mse(predict(w, X), Y); returns the loss before the step.": "Один шаг SGD на mse(predict(w, X), Y); возвращает потери до шага.",
    "The loss at w, as a float.": "Потери в w, как число float.",
    # ex05b_tidy_too_eager
    "Standardise columns: (x - mean) / std, with the mean and std learnt by ``fit``.":
        "Стандартизует столбцы: (x - mean) / std, со средним и std, найденными ``fit``.",
    "Learn the mean and the (population) standard deviation of every column.": "Находит среднее и стандартное отклонение (генеральной совокупности) каждого столбца.",
    "Standardise rows with what ``fit`` learnt.": "Стандартизует строки тем, что нашёл ``fit``.",
    # ex05c_leaky_loop
    "Mean squared error of X @ w against Y.": "Среднеквадратичная ошибка X @ w относительно Y.",
    "Plain SGD on w; returns the loss before every step, as floats.": "Обычный SGD по w; возвращает потери перед каждым шагом, как числа float.",
    # ex06_exploding_rnn
    "the starting weights: |w| > 1, so h grows like w^t": "начальные веса: |w| > 1, поэтому h растёт как w^t",
    "made by w = 0.9, u = 0.5": "получены при w = 0.9, u = 0.5",
    "TODO 2: record the raw gradients in the monitor here, before clipping.": "TODO 2: запишите здесь исходные градиенты в монитор, до обрезки.",
    "Run the linear recurrent net h ← w·h + u·x over XS; squared error of the last h.":
        "Прогоняет линейную рекуррентную сеть h ← w·h + u·x по XS; квадрат ошибки последнего h.",
    "Rescale the gradients together so their global L2 norm is at most ``max_norm``.":
        "Масштабирует градиенты вместе так, чтобы их глобальная норма L2 была не больше ``max_norm``.",
    "SGD with clipping; returns the losses and a monitor of the raw gradients.": "SGD с обрезкой; возвращает потери и монитор исходных градиентов.",
    "TODO 1: return the gradients rescaled together so their global norm is at most max_norm":
        "TODO 1: верните градиенты, масштабированные вместе так, чтобы их глобальная норма была не больше max_norm",
    # ex06b_learning_rate
    "2 / λ_max of the loss's Hessian, for the data in XS.": "2 / λ_max гессиана функции потерь для данных из XS.",
    "Plain SGD from w = b = 0; returns the loss before every step.": "Обычный SGD от w = b = 0; возвращает потери перед каждым шагом.",
    "TODO 1: work out λ_max of the 2x2 Hessian from XS and return 2 / λ_max": "TODO 1: найдите λ_max гессиана 2x2 по XS и верните 2 / λ_max",
    # ex06c_rescue_the_run
    "|w| > 1: h grows like w^t": "|w| > 1: h растёт как w^t",
    "The last hidden state, in plain Python.": "Последнее скрытое состояние, на обычном Python.",
    "Squared error of the last hidden state of the recurrent net.": "Квадрат ошибки последнего скрытого состояния рекуррентной сети.",
    "SGD from (W0, U0); returns the loss of every step.": "SGD из (W0, U0); возвращает потери каждого шага.",
    # ex07_profile_memory
    "A dense layer with relu, summed: sum(relu(x @ w)). Given: do not change it.": "Полносвязный слой с relu, просуммированный: sum(relu(x @ w)). Дано: не меняйте.",
    "How many more tensors are alive after one call of ``fn`` than before.": "На сколько больше тензоров живо после одного вызова ``fn``, чем до него.",
    "Profile one call of ``layer`` inside ``tidy``.": "Профилирует один вызов ``layer`` внутри ``tidy``.",
    "The most memory ``fn`` used at once, beyond what was alive before it ran.": "Наибольшая память, которую ``fn`` заняла одновременно, сверх того, что было живо до её запуска.",
    "TODO 1: return how many more tensors are alive after one call of fn than before it":
        "TODO 1: верните, на сколько больше тензоров живо после одного вызова fn, чем до него",
    "TODO 2: return the profile of one call of layer(x, w) run inside tidy": "TODO 2: верните профиль одного вызова layer(x, w), выполненного внутри tidy",
    "TODO 3: return fn's peak memory in bytes beyond what was alive before it ran":
        "TODO 3: верните пиковую память fn в байтах сверх того, что было живо до её запуска",
    # ex07b_trace_the_nan
    "exactly on the first point": "ровно на первой точке",
    "TODO 1: the op the trace names first, e.g. 'exp'": "TODO 1: операция, которую трассировка называет первой, например 'exp'",
    "TODO 1: 'forward' or 'backward'": "TODO 1: 'forward' или 'backward'",
    "The Euclidean distance from each point (a row) to ``center``, shape (rows,).": "Евклидово расстояние от каждой точки (строки) до ``center``, форма (строки,).",
    "The mean distance from ``center`` to the points.": "Среднее расстояние от ``center`` до точек.",
    "Plain gradient descent from ``START``; returns the loss of every step.": "Обычный градиентный спуск из ``START``; возвращает потери каждого шага.",
    # ex09_dot_product_test
    "√(x² + 1): a smooth abs, with a hand-written gradient.": "√(x² + 1): гладкий abs с градиентом, написанным вручную.",
    "The sum of soft_abs(x).": "Сумма soft_abs(x).",
    "The dot-product test of f at x: (⟨u, J v⟩, ⟨Jᵀu, v⟩), as Python floats.": "Тест скалярного произведения для f в точке x: (⟨u, J v⟩, ⟨Jᵀu, v⟩), как числа Python float.",
    "TODO 1: return <u, J v> from a JVP along v and <J^T u, v> from a VJP with the cotangent u, as floats":
        "TODO 1: верните <u, J v> из JVP вдоль v и <J^T u, v> из VJP с котангенсом u, как числа float",
    # ex09b_stable_loss
    "the last two are large: the loss is inf": "последние два велики: потеря равна inf",
    "The mean binary cross-entropy of labels and sigmoid(logits).": "Средняя бинарная перекрёстная энтропия labels и sigmoid(logits).",
    "TODO 1: make it stable on the logits": "TODO 1: сделайте её устойчивой на логитах",
}
"""Comments, function docstrings and TODO messages of the starters: English -> Russian."""
