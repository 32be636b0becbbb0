// The sanzi console page: plain JavaScript, no build step. It follows the WebSocket (/ws) and posts
// commands as JSON; the server's contract is in services/console/server.py.
"use strict";

const $ = (id) => document.getElementById(id);
const token = new URLSearchParams(location.search).get("token");
const view = { game: null, vision: null, world: null };

// ------------------------------------------------------------------ boards

function makeBoard(el) {
  for (let n = 1; n <= 9; n++) {
    const cell = document.createElement("div");
    cell.className = "cell";
    cell.dataset.square = String(n);
    cell.innerHTML = `<span class="n">${n}</span><span class="conf"></span>`;
    el.appendChild(cell);
  }
}
for (const id of ["board-referee", "board-vision", "board-world"]) makeBoard($(id));

function drawBoard(el, board, confidences) {
  const cells = el.querySelectorAll(".cell");
  for (let i = 0; i < 9; i++) {
    const c = board ? board[i] : "";
    const cell = cells[i];
    cell.dataset.state = c;
    let piece = cell.querySelector(".piece");
    if (c === "." || c === "") { if (piece) piece.remove(); }
    else {
      if (!piece) { piece = document.createElement("div"); cell.appendChild(piece); }
      piece.className = "piece " + (c === "X" || c === "O" ? c : "unknown");
    }
    cell.querySelector(".conf").textContent = confidences && confidences[i] !== undefined ? confidences[i].toFixed(2) : "";
  }
}

// ------------------------------------------------------------------ rendering what the server pushes

function showGame(g) {
  view.game = g;
  document.body.classList.toggle("sim", !!g.sim);
  $("phase").textContent = g.phase + (g.task ? ` · task ${g.task}` : "") + (g.activity ? ` · ${g.activity}` : "");
  $("lamp").classList.toggle("on", !!g.lamp);
  $("message").textContent = g.message || "";
  drawBoard($("board-referee"), g.board);
  $("result").textContent = g.result ? "result: " + g.result : "";
  const facts = [];
  if (g.person_colour) facts.push(`you play ${g.person_colour}`);
  facts.push(`move ${g.move_number}`, `level ${g.level}`);
  if (g.cheats_restored) facts.push(`cheats undone ${g.cheats_restored}`);
  if (g.illegal_moves) facts.push(`illegal moves ${g.illegal_moves}`);
  if (g.peers_down && g.peers_down.length) facts.push(`waiting for ${g.peers_down.join(", ")}`);
  let html = facts.join(" · ");
  if (g.illegal) html += `<br><span class="illegal">illegal: ${esc(g.illegal)}${g.message ? " — " + esc(g.message) : ""}</span>`;
  if (g.fault) html += `<br><span class="illegal">fault: ${esc(g.fault)}</span>`;
  $("facts").innerHTML = html;
}

function showVision(v) {
  view.vision = v;
  drawBoard($("board-vision"), v ? v.board : null, v ? v.confidences : null);
}

function showWorld(w) {
  view.world = w;
  drawBoard($("board-world"), w ? w.board : null);
  const policy = $("policy");
  if (w && w.policy && document.activeElement !== policy) {
    if (![...policy.options].some((o) => o.value === w.policy)) policy.add(new Option(w.policy, w.policy));
    policy.value = w.policy;
  }
  const speed = $("speed");
  if (w && w.speed && document.activeElement !== speed) {
    const value = String(w.speed);
    if (![...speed.options].some((o) => o.value === value)) speed.add(new Option(value, value));
    speed.value = value;
  }
}

function showHealth(h) {
  $("processes").tBodies[0].innerHTML = h.processes.map((p) =>
    `<tr><td>${esc(p.name)}</td><td class="${p.alive ? "yes" : "no"}">${p.alive ? "yes" : "NO"}</td>` +
    `<td>${p.restarts}</td><td>${p.heartbeat_age_s.toFixed(1)} s</td><td>${esc(p.health)}</td>` +
    `<td class="err">${esc(p.last_error)}</td></tr>`).join("");
  $("topics").tBodies[0].innerHTML = h.topics.map((t) => {
    const state = t.expected_hz ? (t.alive ? (t.on_rate === false ? "below rate" : "ok") : "NOT ALIVE") : "";
    const cls = state === "ok" ? "yes" : state ? "no" : "";
    return `<tr><td>${esc(t.topic)}</td><td>${t.rate_hz === null ? "–" : t.rate_hz.toFixed(1)}</td>` +
      `<td>${t.expected_hz || ""}</td><td class="${cls}">${state}</td></tr>`;
  }).join("");
}

function showTimeline(events) {
  $("timeline").innerHTML = events.slice().reverse().map((e) =>
    `<li class="${esc(e.kind)}">${new Date(e.t * 1000).toLocaleTimeString()} ${esc(e.text)}</li>`).join("");
}

function showStats(s) {
  const mine = s.clients.length ? s.clients : [];
  const lat = mine.map((c) => c.latency_ms_p50).filter((x) => x !== null);
  $("latency").textContent = lat.length ? Math.max(...lat).toFixed(0) : "–";
}

function esc(s) {
  return String(s ?? "").replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
}

// ------------------------------------------------------------------ frames: one in flight, ack when shown

const camera = $("camera");
let shownUrl = null, pendingSeq = 0, ws = null;
const shownTimes = [];

camera.addEventListener("load", () => {
  if (ws && ws.readyState === WebSocket.OPEN && pendingSeq) ws.send(JSON.stringify({ type: "shown", seq: pendingSeq }));
  const now = performance.now();
  shownTimes.push(now);
  while (shownTimes.length && now - shownTimes[0] > 2000) shownTimes.shift();
  window.sanziFramesShown = (window.sanziFramesShown || 0) + 1;
});

setInterval(() => {
  const n = shownTimes.length;
  const fps = n > 1 ? (n - 1) / ((shownTimes[n - 1] - shownTimes[0]) / 1000) : 0;
  $("fps").textContent = fps.toFixed(1);
  window.sanziFps = fps;
}, 500);

function showFrame(buffer) {
  const seq = new DataView(buffer).getUint32(0);
  const url = URL.createObjectURL(new Blob([buffer.slice(4)], { type: "image/jpeg" }));
  const old = shownUrl;
  shownUrl = url;
  pendingSeq = seq;
  camera.src = url;
  if (old) setTimeout(() => URL.revokeObjectURL(old), 1000);
}

// ------------------------------------------------------------------ the WebSocket

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  ws = new WebSocket(`${proto}//${location.host}/ws` + (token ? `?token=${encodeURIComponent(token)}` : ""));
  ws.binaryType = "arraybuffer";
  ws.onopen = () => { $("conn").textContent = "live"; $("conn").className = "conn ok"; };
  ws.onclose = () => {
    $("conn").textContent = "disconnected: retrying"; $("conn").className = "conn bad";
    setTimeout(connect, 1000);
  };
  ws.onmessage = (ev) => {
    if (typeof ev.data !== "string") { showFrame(ev.data); return; }
    const msg = JSON.parse(ev.data);
    switch (msg.type) {
      case "game": showGame(msg.data); break;
      case "vision": showVision(msg.data); break;
      case "world": showWorld(msg.data); break;
      case "health": showHealth(msg.data); break;
      case "timeline": showTimeline(msg.data); break;
      case "stats": showStats(msg.data); break;
    }
  };
}
connect();

// ------------------------------------------------------------------ commands

async function post(path, body, replyEl) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  replyEl.textContent = "…"; replyEl.className = "reply";
  try {
    const res = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
    const data = await res.json();
    replyEl.textContent = data.ok ? "ok" + (data.game_id ? ` (game ${data.game_id})` : "") : data.error;
    replyEl.className = "reply " + (data.ok ? "ok" : "bad");
    return data;
  } catch (err) {
    replyEl.textContent = "no answer: " + err; replyEl.className = "reply bad";
    return { ok: false };
  }
}

function numbers(text) {
  return text.split(/[ ,]+/).filter(Boolean).map(Number);
}

function taskChanged() {
  const t = Number($("task").value);
  document.body.classList.toggle("t23", t === 2 || t === 3);
  document.body.classList.toggle("t46", t === 4 || t === 6);
}
$("task").addEventListener("change", taskChanged);
taskChanged();

$("start").addEventListener("click", () => {
  const task = Number($("task").value);
  const body = { action: "task", task };
  if (task === 2 || task === 3) {
    body.squares = numbers($("squares").value);
    if ($("colours").value.trim()) body.colours = $("colours").value.trim();
  }
  if ((task === 4 || task === 6) && $("first").value.trim()) body.first = Number($("first").value);
  post("/api/operator", body, $("op-reply"));
});
$("stop").addEventListener("click", () => post("/api/operator", { action: "stop" }, $("op-reply")));
$("set-level").addEventListener("click", () => post("/api/operator", { action: "level", level: $("level").value }, $("op-reply")));
$("press").addEventListener("click", () => post("/api/sim/button", {}, $("sim-reply")));
$("speed").addEventListener("change", () => post("/api/sim/speed", { speed: Number($("speed").value) }, $("sim-reply")));
$("policy").addEventListener("change", () => post("/api/sim/human", { policy: $("policy").value, misbehave: [] }, $("sim-reply")));

// The table: click an empty square to put your piece there; drag a piece to another square to move it
// (task 6's cheat), or off the board to take it away.
let dragFrom = null;
const worldBoard = $("board-world");
worldBoard.addEventListener("pointerdown", (ev) => {
  const cell = ev.target.closest(".cell");
  if (!cell) return;
  if (cell.dataset.state === "X" || cell.dataset.state === "O") {
    dragFrom = Number(cell.dataset.square);
    cell.classList.add("drag-from");
  }
});
document.addEventListener("pointerup", (ev) => {
  const target = document.elementFromPoint(ev.clientX, ev.clientY);
  const cell = target && target.closest ? target.closest("#board-world .cell") : null;
  const from = dragFrom;
  dragFrom = null;
  worldBoard.querySelectorAll(".drag-from").forEach((c) => c.classList.remove("drag-from"));
  if (from !== null) {
    if (!cell) post("/api/sim/remove", { square: from }, $("sim-reply"));
    else if (Number(cell.dataset.square) !== from) post("/api/sim/move", { from_square: from, to_square: Number(cell.dataset.square) }, $("sim-reply"));
    return;
  }
  if (cell && cell.dataset.state === ".") post("/api/sim/place", { square: Number(cell.dataset.square) }, $("sim-reply"));
});
