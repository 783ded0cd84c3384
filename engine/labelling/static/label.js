"use strict";
// The labelling page: everything by keyboard, every rating saved by the
// server (fsync'ed) before the page moves on.
const token = new URLSearchParams(location.search).get("token") || "";
const $ = (id) => document.getElementById(id);
let session = sessionStorage.getItem("session") || null;
let state = null;       // the server's view of this labeller
let current = null;     // the item shown
let highlight = false;

async function api(method, path, body) {
  const init = { method, headers: { "X-Label-Token": token } };
  if (body !== undefined) { init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
  const response = await fetch(path, init);
  if (!response.ok) throw new Error(await response.text());
  return response.json();
}

function text(el, value) { el.textContent = value; }

function render(el, doc, span) {
  el.replaceChildren();
  if (!highlight || span[0] >= span[1]) { text(el, doc); return; }
  el.append(doc.slice(0, span[0]));
  const mark = document.createElement("mark");
  mark.textContent = doc.slice(span[0], span[1]);
  el.append(mark, doc.slice(span[1]));
}

function show() {
  render($("doc1"), current.document_1, current.changed_1);
  render($("doc2"), current.document_2, current.changed_2);
  text($("given"), current.given === null ? "" : `saved: ${current.given}`);
  $("rating").value = current.given === null ? "" : String(current.given);
  text($("progress"), `${state.labeller}: ${state.done} of ${state.total} labelled`);
  $("rating").focus();
  $("rating").select();
}

async function open(itemId) {
  text($("error"), "");
  if (itemId === null) {
    $("work").hidden = true; $("finished").hidden = false;
    text($("progress"), `${state.labeller}: ${state.done} of ${state.total} labelled`);
    return;
  }
  current = await api("GET", `/api/item/${encodeURIComponent(itemId)}?session=${session}`);
  current.item_id = itemId;
  $("work").hidden = false; $("finished").hidden = true;
  show();
}

async function start(name) {
  try {
    const claimed = await api("POST", "/api/claim", { labeller: name, session });
    session = claimed.session; sessionStorage.setItem("session", session);
    state = claimed;
    text($("scale"), `${claimed.scale.low} to ${claimed.scale.high}${claimed.scale.integer ? " (whole numbers)" : ""}`);
    text($("instructions-text"), claimed.instructions);
    $("login").hidden = true;
    await open(state.next);
  } catch (err) { text($("login-error"), err.message); }
}

async function save() {
  const raw = $("rating").value.trim();
  const value = Number(raw);
  if (raw === "" || Number.isNaN(value)) { text($("error"), "type a number, then Enter"); return; }
  try {
    state = await api("POST", "/api/label", { session, item_id: current.item_id, value });
    const at = state.history.indexOf(current.item_id);
    const after = state.history[at + 1];  // re-rating an earlier item moves forward through what was done
    await open(after !== undefined ? after : state.next);
  } catch (err) { text($("error"), err.message); }
}

async function step(delta) {
  const at = state.history.indexOf(current.item_id);
  const target = at === -1 ? (delta < 0 ? state.history[state.history.length - 1] : undefined) : state.history[at + delta];
  if (target !== undefined) await open(target);
  else if (delta > 0) await open(state.next);
}

$("name").addEventListener("keydown", (event) => {
  if (event.key === "Enter") start($("name").value.trim());
});
document.addEventListener("keydown", (event) => {
  if ($("work").hidden) return;
  if (event.key === "Enter" && event.target === $("rating")) { event.preventDefault(); save(); }
  else if (event.altKey && event.key === "ArrowLeft") { event.preventDefault(); step(-1); }
  else if (event.altKey && event.key === "ArrowRight") { event.preventDefault(); step(1); }
  else if (event.altKey && (event.key === "h" || event.key === "H")) { event.preventDefault(); highlight = !highlight; show(); }
});
