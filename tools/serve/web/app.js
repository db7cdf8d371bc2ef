// weir serve's page: channel, consumer and key tables from the JSON API (polled once a second),
// scope and spectrum views from binary WebSocket frames (frame_codec.hpp), an MCA panel from /api/mca,
// the run bar from /api/run.
// Views are bound to channel names and kept in the URL (#view=det0:scope:span=0.01&view=fft0:spectrum),
// so a view can be shared and survives a restart that reorders the channels.
import { createMca } from './mca.js';
import { createRunBar } from './run.js';
import { createScope } from './scope.js';
import { createSpectrum } from './spectrum.js';
import { el, si, td } from './util.js';

const HEADER_BYTES = 56, MAGIC = 0x52494557, KIND_ENVELOPE = 1;
const SPARK_POINTS = 60;           // key history kept per key

const state = { channels: [], byName: new Map(), views: [], ws: null, keyHistory: new Map(), hash: '' };
const debug = { errors: [], framesReceived: 0, drawn: 0, drawLatencyMs: [] };
window.weirDebug = debug;
window.addEventListener('error', (e) => debug.errors.push(String(e.message)));

// ---- JSON API ---------------------------------------------------------------------------------
async function api(path, reviver) {
  const r = await fetch(path, { credentials: 'same-origin' });
  if (!r.ok) throw new Error(path + ': ' + r.status);
  return JSON.parse(await r.text(), reviver);
}

// A key's value keeps its JSON text, so a u64 past 2^53 shows every digit (JSON.parse source access).
function keepSource(key, value, context) {
  if (key === 'value' && typeof value === 'number' && context && typeof context.source === 'string')
    return { number: value, source: context.source };
  return value;
}

const mca = createMca(document.getElementById('mca-panel'));
const runBar = createRunBar(document.getElementById('run-bar'));

async function refresh() {
  try {
    const [arena, ch, keys, m] = await Promise.all([api('api/arena'), api('api/channels'), api('api/keys', keepSource), api('api/mca')]);
    document.getElementById('arena').textContent = arena.name;
    state.channels = ch.channels;
    state.byName = new Map(ch.channels.map((c) => [c.name, c]));
    for (const v of state.views) v.setChannel(state.byName.get(v.name));
    const indices = state.views.map((v) => (state.byName.has(v.name) ? state.byName.get(v.name).index : -1)).join();
    if (indices !== state.indices) { state.indices = indices; sendViews(); }  // the index form follows a reorder
    drawChannelTables();
    drawKeys(keys.keys);
    mca.update(m.mca);
    setStatus();
  } catch (e) {
    document.getElementById('status').textContent = 'API: ' + e.message;
  }
}

function staleText(c) {
  return c.stale ? `stale ${si(c.newest_block_age_s, 's', 2)}` : '';
}

function drawChannelTables() {
  const body = document.querySelector('#channels tbody');
  body.replaceChildren();
  const cons = document.querySelector('#consumers tbody');
  cons.replaceChildren();
  for (const c of state.channels) {
    const open = state.views.some((v) => v.name === c.name);
    const name = el('td', {}, c.name + (c.frame ? ' ⧉' : ''));
    if (c.stale) name.append(' ', el('span', { class: 'badge stale', title: 'no new block for longer than the stale timeout' }, staleText(c)));
    const row = el('tr', { class: 'channel' + (open ? ' open' : '') + (c.stale ? ' stale' : ''), 'data-name': c.name,
      onclick: () => toggleView(c.name) },
    name, td(si(c.rate_hz, 'Hz'), 'num'), td(c.blocks_per_s.toFixed(1), 'num'),
    td(c.dropped_at_source, c.dropped_at_source ? 'num bad' : 'num'), td(c.writer_alive ? 'pid ' + c.writer_pid : 'none'));
    body.append(row);
    for (const k of c.consumers) {
      cons.append(el('tr', {}, td(c.name), td(k.name), td(k.kind || '—'), td(k.blocks_read, 'num'),
        td(k.blocks_lost, k.blocks_lost ? 'num bad' : 'num'), td(k.lag_blocks, 'num'), td(k.errors, k.errors ? 'num bad' : 'num'),
        td(k.proc_p50_ns ? (k.proc_p50_ns / 1e3).toFixed(1) + ' / ' + (k.proc_p99_ns / 1e3).toFixed(1) : '—', 'num')));
    }
  }
}

// Integers (i64, u64) as integers, every digit; reals (f64) to six significant digits.
function keyText(k) {
  const v = k.value;
  if (v === null) return k.shape || k.type;
  if (typeof v === 'object' && 'number' in v) {
    if (k.type === 'i64' || k.type === 'u64') return /^-?\d+$/.test(v.source) ? v.source : BigInt(Math.round(v.number)).toString();
    return v.number.toPrecision(6);
  }
  return String(v);
}

function drawKeys(keys) {
  const body = document.querySelector('#keys tbody');
  body.replaceChildren();
  for (const k of keys) {
    let text = keyText(k);
    if (text.length > 28) text = text.slice(0, 28) + '…';
    const number = k.value !== null && typeof k.value === 'object' && 'number' in k.value ? k.value.number : null;
    const hist = state.keyHistory.get(k.key) || [];
    if (number !== null) {
      hist.push(number);
      if (hist.length > SPARK_POINTS) hist.shift();
      state.keyHistory.set(k.key, hist);
    }
    const spark = el('canvas', { class: 'spark', width: 90, height: 18 });
    drawSpark(spark, hist);
    body.append(el('tr', { 'data-key': k.key }, td(k.key), td(text, number !== null ? 'num' : 'text'), el('td', {}, spark)));
  }
}

function drawSpark(canvas, values) {
  if (values.length < 2) return;
  const g = canvas.getContext('2d');
  const lo = Math.min(...values), hi = Math.max(...values), range = hi - lo || 1;
  g.strokeStyle = '#6c6';
  g.beginPath();
  values.forEach((v, i) => {
    const x = (i / (SPARK_POINTS - 1)) * canvas.width, y = canvas.height - 1 - ((v - lo) / range) * (canvas.height - 2);
    i ? g.lineTo(x, y) : g.moveTo(x, y);
  });
  g.stroke();
}

// ---- views, the URL and the WebSocket ----------------------------------------------------------
function setStatus() {
  const ws = state.ws && state.ws.readyState === WebSocket.OPEN ? 'live' : 'reconnecting';
  document.getElementById('status').textContent = `${ws} · ${state.channels.length} channel(s) · ${debug.framesReceived} frames`;
}

function connect() {
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + location.pathname.replace(/[^/]*$/, '') + 'ws';
  const ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => { state.ws = ws; sendViews(); setStatus(); };
  ws.onmessage = (m) => { if (m.data instanceof ArrayBuffer) onFrame(m.data, performance.now()); };
  ws.onclose = () => { state.ws = null; setStatus(); setTimeout(connect, 1000); };
}

// Each view names its channel; the index it has now rides along for a server that reads only that.
function sendViews() {
  if (!state.ws || state.ws.readyState !== WebSocket.OPEN) return;
  const views = [];
  for (const v of state.views) {
    const request = v.request();
    const c = state.byName.get(v.name);
    if (!request) continue;
    views.push(c ? { name: v.name, channel: c.index, ...request } : { name: v.name, ...request });
  }
  state.ws.send(JSON.stringify({ views }));
}

function decode(buf) {
  const d = new DataView(buf);
  if (buf.byteLength < HEADER_BYTES || d.getUint32(0, true) !== MAGIC) return null;
  const n = d.getUint32(12, true);
  const h = { kind: d.getUint16(4, true), flags: d.getUint16(6, true), channel: d.getUint32(8, true), n,
    first: d.getFloat64(16, true), step: d.getFloat64(24, true), anchor: d.getFloat64(32, true),
    newestNs: d.getBigUint64(40, true), span: Number(d.getBigUint64(48, true)) };
  h.a = new Float32Array(buf, HEADER_BYTES, n);
  h.b = h.kind === KIND_ENVELOPE ? new Float32Array(buf, HEADER_BYTES + 4 * n, n) : null;
  return h;
}

// A frame carries the index its channel had when it was made; the views know names, mapped to
// indices by the newest /api/channels.
function onFrame(buf, arrived) {
  const f = decode(buf);
  if (!f) return;
  debug.framesReceived++;
  for (const v of state.views) {
    const c = state.byName.get(v.name);
    if (!c || c.index !== f.channel || !v.accepts(f)) continue;
    v.onFrame(f);
    v.arrived = arrived;
  }
}

const app = {
  channel: (name) => state.byName.get(name),
  send: () => sendViews(),
  close: (v) => toggleView(v.name),
  saveHash: () => saveHash(),
};

function toggleView(name) {
  const at = state.views.findIndex((v) => v.name === name);
  if (at >= 0) {
    state.views[at].node.remove();
    if (state.views[at].u) state.views[at].u.destroy();
    state.views.splice(at, 1);
  } else {
    openView(name);
  }
  drawChannelTables();
  saveHash();
  sendViews();
}

function openView(name, kind, options = {}) {
  const c = state.byName.get(name);
  const k = kind || (c && c.frame ? 'spectrum' : 'scope');
  const v = k === 'spectrum' ? createSpectrum(app, name, options) : createScope(app, name, options);
  document.getElementById('views').prepend(v.node);
  state.views.unshift(v);  // in the order shown, top first, as the address lists them
  v.setChannel(c);
  saveHash();
  sendViews();
  return v;
}

function saveHash() {
  const parts = state.views.map((v) => 'view=' + [encodeURIComponent(v.name), v.kind, ...v.hashPart()].join(':'));
  state.hash = parts.length ? '#' + parts.join('&') : '';
  if (location.hash !== state.hash) history.replaceState(null, '', state.hash || location.pathname + location.search);
}

function parseHash(hash) {
  const out = [];
  for (const part of hash.replace(/^#/, '').split('&')) {
    if (!part.startsWith('view=')) continue;
    const [name, kind, ...rest] = part.slice(5).split(':');
    if (!name) continue;
    const options = {};
    for (const kv of rest) {
      const at = kv.indexOf('=');
      if (at > 0) options[kv.slice(0, at)] = decodeURIComponent(kv.slice(at + 1));
    }
    out.push({ name: decodeURIComponent(name), kind: kind === 'spectrum' ? 'spectrum' : 'scope', options });
  }
  return out;
}

function restoreHash() {
  for (const v of state.views) { v.node.remove(); if (v.u) v.u.destroy(); }
  state.views = [];
  for (const s of parseHash(location.hash).reverse()) openView(s.name, s.kind, s.options);
  drawChannelTables();
}
window.addEventListener('hashchange', () => { if (location.hash !== state.hash) restoreHash(); });
window.addEventListener('resize', () => { for (const v of state.views) v.resize(); mca.resize(); sendViews(); });

function frameLoop() {
  for (const v of state.views) {
    if (!v.dirty) continue;
    v.dirty = false;
    v.draw();
    if (v.frame) {
      debug.drawn++;
      if (v.arrived) {
        debug.drawLatencyMs.push(performance.now() - v.arrived);
        if (debug.drawLatencyMs.length > 1000) debug.drawLatencyMs.shift();
        v.arrived = 0;
      }
    }
  }
  requestAnimationFrame(frameLoop);
}

// ---- hooks for scripts and tests ----------------------------------------------------------------
const view = (name) => state.views.find((v) => v.name === name);
// options: { kind: 'scope' | 'spectrum', span: samples }.
debug.open = (name, options) => {
  options = options || {};
  const v = view(name) || openView(name, options.kind);
  if (options.span && v.setSpan) v.setSpan(options.span);
  return v ? true : null;
};
debug.setSpan = (name, samples) => (view(name) && view(name).setSpan ? view(name).setSpan(samples) : null);
debug.frame = (name) => {
  const v = view(name);
  if (!v || !v.frame) return null;
  const f = v.frame;
  let max = -Infinity;
  for (const x of (f.b || f.a)) if (isFinite(x)) max = Math.max(max, x);
  return { kind: f.kind, n: f.n, span: f.span, asked: v.asked, first: f.first, step: f.step, anchor: f.anchor, flags: f.flags, max,
    peak: v.peak || null, values: f.kind === KIND_ENVELOPE ? null : Array.from(f.a),
    mid: f.kind === KIND_ENVELOPE && f.n <= 4096 ? Array.from(f.a, (a, i) => (a + f.b[i]) / 2) : null };
};
debug.plot = (name) => (view(name) ? view(name).info() : null);
debug.pos = (name, t) => (view(name) && view(name).pos ? view(name).pos(t) : null);
debug.views = () => state.views.map((v) => ({ name: v.name, kind: v.kind, index: state.byName.has(v.name) ? state.byName.get(v.name).index : null }));
debug.channels = () => state.channels.map((c) => c.name);
debug.mca = () => mca.info();
debug.run = () => runBar.info();

restoreHash();
refresh().then(connect);
setInterval(refresh, 1000);
api('api/server').then((s) => runBar.setAllowControl(s.allow_control)).catch(() => {}).then(runBar.refresh);
setInterval(runBar.refresh, 1000);
requestAnimationFrame(frameLoop);
