#include "nmt/serve/web_page.h"

namespace nmt::serve {

std::string_view web_page() {
  static constexpr std::string_view kPage = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>nmt: translate</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d2330; }
  header { background: #1d2330; color: #fff; padding: .6em 1.2em; display: flex; gap: 1.2em; align-items: center; flex-wrap: wrap; }
  header h1 { font-size: 1.2em; margin: 0; }
  header label { font-size: .9em; }
  header select, header input { margin-left: .3em; }
  header input[type=number] { width: 4.5em; }
  main { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; padding: 1em 1.2em; }
  @media (max-width: 800px) { main { grid-template-columns: 1fr; } }
  .pane { background: #fff; border: 1px solid #d5d9e0; border-radius: 6px; padding: .8em; min-height: 12em; }
  textarea { width: 100%; box-sizing: border-box; min-height: 10em; border: 0; font: inherit; resize: vertical; outline: none; }
  #source-words, #translation { white-space: pre-wrap; }
  #source-words { color: #566; font-size: .9em; border-top: 1px dashed #d5d9e0; margin-top: .5em; padding-top: .4em; }
  .w { border-radius: 3px; }
  .w.lit { background: #ffe08a; }
  #status { padding: 0 1.2em 1em; color: #566; font-size: .85em; }
  #status.error { color: #b00020; }
</style>
</head>
<body>
<header>
  <h1>nmt</h1>
  <label>model <select id="model"></select></label>
  <label>beam <input id="beam" type="number" min="1" max="16" value="1"></label>
  <label>α <input id="alpha" type="number" min="0" max="5" step="0.1" value="0.6"></label>
  <label>key <input id="key" type="password" size="12" placeholder="(none)"></label>
</header>
<main>
  <div class="pane"><textarea id="source" placeholder="Type here; the translation follows." autofocus></textarea>
    <div id="source-words" aria-label="source words"></div></div>
  <div class="pane"><div id="translation" aria-live="polite"></div></div>
</main>
<div id="status">Loading models…</div>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const status = (text, error) => { $("status").textContent = text; $("status").className = error ? "error" : ""; };
const words = (text) => text.split(/\s+/).filter((w) => w.length > 0);
function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("key").value || localStorage.getItem("nmt-key") || "";
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}
// Words as spans; `links` maps a word index to the other side's indices it is aligned with.
function render(el, text, side, links, other) {
  el.textContent = "";
  words(text).forEach((w, i) => {
    const span = document.createElement("span");
    span.className = "w";
    span.textContent = w;
    span.dataset[side] = i;
    span.addEventListener("mouseenter", () => light(other, links.get(i) || [], true, span));
    span.addEventListener("mouseleave", () => light(other, links.get(i) || [], false, span));
    el.appendChild(span);
    el.appendChild(document.createTextNode(" "));
  });
}
function light(el, indices, on, self) {
  self.classList.toggle("lit", on);
  for (const span of el.children) {
    const i = Number(span.dataset.s ?? span.dataset.t);
    if (indices.includes(i)) span.classList.toggle("lit", on);
  }
}
let pending = 0, timer = null;
async function translate() {
  const text = $("source").value;
  const mine = ++pending;
  if (!text.trim()) { $("translation").textContent = ""; $("source-words").textContent = ""; status(""); return; }
  const body = { text, model: $("model").value || undefined, beam: Number($("beam").value), alignment: true };
  if ($("beam").value > 1) body.alpha = Number($("alpha").value);
  status("Translating…");
  try {
    const response = await fetch("/translate", { method: "POST", headers: headers(), body: JSON.stringify(body) });
    const answer = await response.json();
    if (mine !== pending) return;  // a newer request is on its way
    if (!response.ok) { status(answer.error || ("HTTP " + response.status), true); return; }
    const toSource = new Map(), toTarget = new Map();
    for (const link of (answer.alignment || "").split(" ").filter(Boolean)) {
      const [s, t] = link.split("-").map(Number);
      (toSource.get(t) || toSource.set(t, []).get(t)).push(s);
      (toTarget.get(s) || toTarget.set(s, []).get(s)).push(t);
    }
    render($("translation"), answer.translation, "t", toSource, $("source-words"));
    render($("source-words"), text, "s", toTarget, $("translation"));
    document.body.dataset.translated = "yes";
    const hover = new URLSearchParams(location.search).get("hover");  // ?hover=N: as if word N were pointed at
    const pointed = hover === null ? null : $("translation").querySelector(`[data-t="${Number(hover)}"]`);
    if (pointed) pointed.dispatchEvent(new Event("mouseenter"));
    status(`${answer.model} · ${answer.sentences === 1 ? "1 text" : answer.sentences + " texts"} · ${answer.ms} ms · hover a word for its alignment`);
  } catch (e) {
    if (mine === pending) status("The server did not answer: " + e, true);
  }
}
const soon = () => { clearTimeout(timer); timer = setTimeout(translate, 250); };
["source", "beam", "alpha", "model"].forEach((id) => $(id).addEventListener("input", soon));
$("key").addEventListener("change", () => { localStorage.setItem("nmt-key", $("key").value); loadModels(); });
async function loadModels() {
  try {
    const response = await fetch("/models", { headers: headers() });
    const answer = await response.json();
    if (!response.ok) { status(answer.error || ("HTTP " + response.status), true); return; }
    $("model").textContent = "";
    for (const m of answer.models) {
      const option = document.createElement("option");
      option.value = m.name;
      option.textContent = `${m.name} (${m.type}, ${m.weights})`;
      $("model").appendChild(option);
    }
    $("beam").max = answer.max_beam;
    $("beam").value = answer.beam;
    status("Ready.");
    const q = new URLSearchParams(location.search).get("q");
    if (q !== null && $("source").value === "") { $("source").value = q; translate(); }
  } catch (e) {
    status("The server did not answer: " + e, true);
  }
}
loadModels();
</script>
</body>
</html>
)html";
  return kPage;
}

}  // namespace nmt::serve
