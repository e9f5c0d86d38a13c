// The Python of a "Run in the browser" page: Pyodide in a Web Worker, so a long or endless cell
// never freezes the page (the page ends the worker to stop it). Everything is loaded from the
// book itself: the runtime (_static/pyodide/) and microtape's wheel, made by the book's build.
//
// Messages from the page: {kind: "start", runtime, wheel}, {kind: "file", name, text},
// {kind: "run", id, code, name, lang, line}. To the page: {kind: "ready", pyodide, python},
// {kind: "output", id, text, failed}, {kind: "failed", id, error}.

let runCell = null;
let session = null;

async function start(message) {
  const { loadPyodide } = await import(message.runtime + "pyodide.mjs");
  const pyodide = await loadPyodide({ indexURL: message.runtime, env: { MICROTAPE_LANG: message.lang } });
  const response = await fetch(message.wheel);
  if (!response.ok) throw new Error(message.wheel + ": " + response.status);
  pyodide.unpackArchive(new Uint8Array(await response.arrayBuffer()), "wheel");
  const browser = pyodide.pyimport("microtape.book.browser");
  runCell = browser.run_cell;
  session = browser.SESSION;
  self.pyodide = pyodide;
  const python = pyodide.runPython("import sys; sys.version.split()[0]");
  return { kind: "ready", pyodide: pyodide.version, python };
}

async function run(message) {
  // callPromising lets a cell wait for a coroutine (pyodide.ffi.run_sync) where the browser can
  // switch stacks (JSPI); elsewhere the cell runs as a plain call.
  const call = runCell.callPromising ? runCell.callPromising.bind(runCell) : runCell;
  const text = await call(message.code, message.name, message.lang, message.line || 1);
  return { kind: "output", id: message.id, text: String(text), failed: Boolean(session.failed) };
}

self.onmessage = async (event) => {
  const message = event.data;
  try {
    if (message.kind === "start") {
      self.postMessage(await start(message));
    } else if (message.kind === "file") {
      self.pyodide.FS.writeFile(message.name, message.text, { encoding: "utf8" });
    } else if (message.kind === "run") {
      self.postMessage(await run(message));
    }
  } catch (error) {
    self.postMessage({ kind: "failed", id: message.id, error: String(error && error.message ? error.message : error) });
  }
};
