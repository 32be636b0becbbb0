// The gomoku page: five in a row against the engine. Plain JavaScript, no build step; the server's
// contract is in services/console/server.py (GET /api/gomoku/state, POST /api/gomoku/new and /move).
"use strict";

const $ = (id) => document.getElementById(id);
const token = new URLSearchParams(location.search).get("token");
const COLUMNS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef";
const board = $("gomoku-board");
let view = null;
let busy = false;

const squareName = (x, y) => `${COLUMNS[x]}${y + 1}`;

async function call(method, path, body) {
  const headers = {};
  if (token) headers.Authorization = "Bearer " + token;
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  try {
    const res = await fetch(path, init);
    let data;
    try { data = await res.json(); } catch (e) { data = { ok: false, error: `HTTP ${res.status}` }; }
    return { status: res.status, data };
  } catch (e) {
    return { status: 0, data: { ok: false, error: "the console did not answer: " + e } };
  }
}

function build(size) {
  board.innerHTML = "";
  board.style.setProperty("--n", String(size));
  board.dataset.size = String(size);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const pt = document.createElement("button");
      pt.className = "pt" + (x === 0 ? " x0" : x === size - 1 ? " xN" : "") + (y === 0 ? " y0" : y === size - 1 ? " yN" : "");
      pt.dataset.x = String(x);
      pt.dataset.y = String(y);
      pt.dataset.state = ".";
      pt.setAttribute("aria-label", squareName(x, y));
      pt.innerHTML = '<span class="stone"></span>';
      board.appendChild(pt);
    }
  }
}

function point(x, y) { return board.children[y * view.size + x]; }

function draw(v) {
  view = v;
  if (board.dataset.size !== String(v.size)) build(v.size);
  const last = v.moves.length ? v.moves[v.moves.length - 1] : null;
  const line = new Set((v.result ? v.result.line : []).map(([x, y]) => `${x},${y}`));
  for (let y = 0; y < v.size; y++) {
    for (let x = 0; x < v.size; x++) {
      const pt = point(x, y);
      pt.dataset.state = v.board[y][x];
      pt.classList.toggle("last", !!last && last[0] === x && last[1] === y);
      pt.classList.toggle("win", line.has(`${x},${y}`));
    }
  }
  board.classList.toggle("thinking", v.thinking);
  let status;
  if (v.result) {
    status = v.result.winner === null ? "draw: the board is full"
      : v.result.winner === v.person ? "you win!" : "the engine wins";
  } else if (v.thinking) status = "the engine is thinking…";
  else if (v.your_turn) status = `your move (${v.person})`;
  else status = "the engine is to move";
  $("gomoku-status").textContent = status;
  const e = v.engine_move;
  $("gomoku-engine").textContent = e
    ? `engine (${v.engine}, ${v.level}, ${v.rule}) played ${squareName(e.x, e.y)}: ${e.reason}` +
      (e.depth ? `, depth ${e.depth}` : "") + `, ${e.nodes} nodes, ${e.ms} ms`
    : `engine: ${v.engine}, level ${v.level}, ${v.rule}`;
}

function reply(text, ok) {
  const el = $("gomoku-reply");
  el.textContent = text;
  el.className = "reply " + (ok ? "ok" : "bad");
}

async function refresh() {
  const { status, data } = await call("GET", "/api/gomoku/state");
  if (status === 200) draw(data);
  else reply(data.error, false);
}

board.addEventListener("click", async (ev) => {
  const pt = ev.target.closest(".pt");
  if (!pt || busy || !view || !view.your_turn || pt.dataset.state !== ".") return;
  busy = true;
  pt.dataset.state = view.person; // shown at once; the answer brings the engine's reply
  $("gomoku-status").textContent = "the engine is thinking…";
  board.classList.add("thinking");
  const { status, data } = await call("POST", "/api/gomoku/move", { x: Number(pt.dataset.x), y: Number(pt.dataset.y) });
  busy = false;
  if (status === 200) { reply("", true); draw(data); }
  else { reply(data.error, false); await refresh(); }
});

$("gomoku-new").addEventListener("click", async () => {
  if (busy) return;
  busy = true;
  const body = { side: $("gomoku-side").value, level: $("gomoku-level").value, rule: $("gomoku-rule").value };
  const { status, data } = await call("POST", "/api/gomoku/new", body);
  busy = false;
  if (status === 200) { reply("new game", true); draw(data); }
  else reply(data.error, false);
});

refresh();
