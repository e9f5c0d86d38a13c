// "Run in the browser": the page's code cells become editable and run in Python in this browser
// (Pyodide, in a Web Worker: worker.js), with microtape from the book's own wheel. Nothing is
// fetched from anywhere but the book. The page's words come from its configuration
// (<script id="mt-run-config">, written by docs/_ext/browser.py in the edition's language).
//
// For the tests and for readers who measure: the bar (#mt-run-bar) carries data-state
// (idle, starting, ready, running, done, failed), data-first-output-ms (from the click to the
// first output) and data-cells-run; every cell carries data-state (idle, running, done, error).
(function () {
  "use strict";
  const config = JSON.parse(document.getElementById("mt-run-config").textContent);
  const words = config.words;
  const bar = document.getElementById("mt-run-bar");
  const status = bar.querySelector(".mt-run-status");
  const cells = [];
  let worker = null;
  let ready = null; // a promise of the worker's "ready"
  let pending = new Map(); // id -> resolve
  let nextId = 1;
  let clicked = 0;
  let busy = false;

  function say(key, values) {
    return (words[key] || key).replace(/`([^`]+)`/g, "$1").replace(/\{(\w+)\}/g, (_, name) => (values && name in values ? values[name] : "{" + name + "}"));
  }

  function setState(state, text) {
    bar.dataset.state = state;
    if (text !== undefined) status.textContent = text;
  }

  function absolute(url) {
    return new URL(url, document.baseURI).href;
  }

  let notice = ""; // why Python was restarted, kept in the status line until the next run

  function startWorker() {
    worker = new Worker(absolute(config.worker), { type: "module" });
    pending = new Map();
    ready = new Promise((resolve, reject) => {
      worker.onmessage = (event) => {
        const message = event.data;
        if (message.kind === "ready") {
          resolve(message);
        } else if (message.kind === "failed" && !message.id) {
          reject(new Error(message.error));
        } else if (pending.has(message.id)) {
          pending.get(message.id)(message);
          pending.delete(message.id);
        }
      };
      worker.onerror = (event) => reject(new Error(event.message || "the worker did not start"));
    });
    worker.postMessage({ kind: "start", runtime: absolute(config.runtime), wheel: absolute(config.wheel), lang: config.lang });
    setState("starting", say("starting"));
    ready.then(
      (info) => setState("ready", (notice ? notice + " " : "") + say("ready", { pyodide: info.pyodide, python: info.python })),
      (error) => setState("failed", say("no_start", { error: error.message })),
    );
  }

  function stopWorker(reason) {
    if (worker) worker.terminate();
    for (const resolve of pending.values()) resolve({ kind: "stopped" });
    pending = new Map();
    cells.forEach((cell) => {
      if (cell.element.dataset.state === "running") cell.element.dataset.state = "error";
    });
    notice = reason;
    startWorker();
    status.textContent = reason;
  }

  function ask(message, limit) {
    const id = nextId++;
    return new Promise((resolve) => {
      let timer = null;
      pending.set(id, (answer) => {
        if (timer) clearTimeout(timer);
        resolve(answer);
      });
      if (limit) {
        timer = setTimeout(() => {
          if (!pending.has(id)) return;
          const resolveIt = pending.get(id);
          pending.delete(id);
          resolveIt({ kind: "timeout" });
          stopWorker(say("timed_out", { limit }));
        }, limit * 1000);
      }
      worker.postMessage(Object.assign({ id }, message));
    });
  }

  function makeCell(block, index) {
    const code = block.querySelector("pre").textContent.replace(/\n+$/, "");
    const element = document.createElement("div");
    element.className = "mt-cell";
    element.dataset.state = "idle";
    element.dataset.index = String(index);
    const editor = document.createElement("textarea");
    editor.className = "mt-cell-code";
    editor.spellcheck = false;
    editor.value = code;
    editor.rows = Math.max(2, code.split("\n").length);
    editor.setAttribute("aria-label", say("cell_label", { n: index + 1 }));
    const tools = document.createElement("div");
    tools.className = "mt-cell-tools";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "mt-cell-run";
    button.textContent = say("run");
    const label = document.createElement("span");
    label.className = "mt-cell-label";
    label.textContent = say("cell_label", { n: index + 1 });
    tools.append(button, label);
    const output = document.createElement("pre");
    output.className = "mt-cell-output";
    output.setAttribute("aria-live", "polite");
    output.hidden = true;
    element.append(editor, tools, output);
    block.replaceWith(element);
    const cell = { element, editor, output, index, check: index === config.check };
    button.addEventListener("click", () => runOne(cell));
    editor.addEventListener("input", () => { editor.rows = Math.max(2, editor.value.split("\n").length); });
    return cell;
  }

  async function runCell(cell) {
    notice = "";
    cell.element.dataset.state = "running";
    cell.output.hidden = false;
    cell.output.textContent = say("running");
    try {
      await ready;
    } catch (error) {
      cell.element.dataset.state = "error";
      cell.output.textContent = say("no_start", { error: error.message });
      return false;
    }
    if (cell.check && config.file) {
      const text = cells.filter((c) => !c.check).map((c) => c.editor.value).join("\n\n\n") + "\n";
      worker.postMessage({ kind: "file", name: config.file, text });
    }
    const name = config.source || "<cell " + (cell.index + 1) + ">";
    const line = config.lines && config.lines[cell.index] ? config.lines[cell.index] : 1;
    const answer = await ask({ kind: "run", code: cell.editor.value, name, line, lang: config.lang },
      cell.check ? config.limit : 0);
    if (!clicked) clicked = performance.now();
    if (!bar.dataset.firstOutputMs) bar.dataset.firstOutputMs = String(Math.round(performance.now() - clicked));
    if (answer.kind === "output") {
      cell.output.textContent = answer.text;
      cell.output.hidden = !answer.text;
      cell.element.dataset.state = answer.failed ? "error" : "done";
      bar.dataset.cellsRun = String(Number(bar.dataset.cellsRun || 0) + 1);
      return cell.element.dataset.state === "done";
    }
    cell.element.dataset.state = "error";
    cell.output.textContent = answer.kind === "timeout" ? say("timed_out", { limit: config.limit })
      : answer.kind === "stopped" ? say("stopped") : say("failed", { error: answer.error });
    return false;
  }

  async function runOne(cell) {
    if (busy) return;
    busy = true;
    setState("running", say("running"));
    await runCell(cell);
    busy = false;
    if (bar.dataset.state === "running") setState("done", say("done"));
  }

  async function runAll() {
    if (busy) return;
    busy = true;
    setState("running", say("running"));
    // As a notebook's "run all": stop at the first cell that fails, but still run an exercise's
    // check, which reports what is wrong with the cells above; a stopped Python ends the run.
    let failed = false;
    for (const cell of cells) {
      if (failed && !cell.check) continue;
      const started = worker;
      const ok = await runCell(cell);
      if (worker !== started) break;
      failed = failed || !ok;
    }
    busy = false;
    if (bar.dataset.state === "running") setState("done", say("done"));
  }

  function enter() {
    clicked = performance.now();
    const start = document.getElementById("mt-run-button");
    if (location.protocol === "file:") {
      setState("failed", say("file_protocol"));
      return;
    }
    if (config.missing) {
      setState("failed", config.missing);
      return;
    }
    start.hidden = true;
    const blocks = Array.from(document.querySelectorAll(config.cells));
    blocks.forEach((block, index) => cells.push(makeCell(block, index)));
    document.body.classList.add("mt-running");
    const tools = bar.querySelector(".mt-run-tools");
    tools.hidden = false;
    tools.querySelector(".mt-run-all").addEventListener("click", runAll);
    tools.querySelector(".mt-run-stop").addEventListener("click", () => {
      busy = false;
      stopWorker(say("stopped"));
    });
    startWorker();
  }

  bar.dataset.state = "idle";
  document.getElementById("mt-run-button").addEventListener("click", enter);
})();
