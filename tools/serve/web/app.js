// weir serve's page: channel, consumer and key tables from the JSON API (polled once a second),
// scopes and spectra from binary WebSocket frames (frame_codec.hpp), an MCA view from /api/mca.
// Plain canvas: a scope draws one vertical min..max bar per column, so every peak stays visible.
'use strict';

const HEADER_BYTES = 56, MAGIC = 0x52494557, KIND_ENVELOPE = 1, KIND_SPECTRUM = 2;
const FLAG_TRIGGERED = 1, FLAG_RAW = 2;
const MIN_SPAN_S = 10e-6;          // the finest zoom: 10 µs
const SPARK_POINTS = 60;           // key history kept per key

const state = { channels: [], byName: new Map(), views: [], ws: null, keyHistory: new Map(), mca: [] };
const debug = { errors: [], framesReceived: 0, drawn: 0, drawLatencyMs: [] };
window.weirDebug = debug;
window.addEventListener('error', (e) => debug.errors.push(String(e.message)));

// ---- formatting -------------------------------------------------------------------------------
function si(value, unit) {
  if (!isFinite(value)) return '—';
  const a = Math.abs(value);
  const prefixes = [[1e9, 'G'], [1e6, 'M'], [1e3, 'k'], [1, ''], [1e-3, 'm'], [1e-6, 'µ'], [1e-9, 'n']];
  for (const [scale, p] of prefixes) if (a >= scale || scale === 1e-9) return (value / scale).toPrecision(4) + ' ' + p + unit;
  return value.toPrecision(4) + ' ' + unit;
}
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v; else if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}
function td(text, cls) { return el('td', cls ? { class: cls } : {}, String(text)); }

// ---- JSON API ---------------------------------------------------------------------------------
async function api(path) {
  const r = await fetch(path, { credentials: 'same-origin' });
  if (!r.ok) throw new Error(path + ': ' + r.status);
  return r.json();
}

async function refresh() {
  try {
    const [arena, ch, keys, mca] = await Promise.all([api('api/arena'), api('api/channels'), api('api/keys'), api('api/mca')]);
    document.getElementById('arena').textContent = arena.name;
    state.channels = ch.channels;
    state.byName = new Map(ch.channels.map((c) => [c.name, c]));
    drawChannelTables();
    drawKeys(keys.keys);
    state.mca = mca.mca;
    drawMca();
    setStatus();
  } catch (e) {
    document.getElementById('status').textContent = 'API: ' + e.message;
  }
}

function drawChannelTables() {
  const body = document.querySelector('#channels tbody');
  body.replaceChildren();
  const cons = document.querySelector('#consumers tbody');
  cons.replaceChildren();
  for (const c of state.channels) {
    const open = state.views.some((v) => v.name === c.name);
    const row = el('tr', { class: 'channel' + (open ? ' open' : ''), onclick: () => toggleView(c.name) },
      td(c.name + (c.frame ? ' ⧉' : '')), td(si(c.rate_hz, 'Hz'), 'num'), td(c.blocks_per_s.toFixed(1), 'num'),
      td(c.dropped_at_source, c.dropped_at_source ? 'num bad' : 'num'), td(c.writer_alive ? 'pid ' + c.writer_pid : 'none'));
    body.append(row);
    for (const k of c.consumers) {
      cons.append(el('tr', {}, td(c.name), td(k.name), td(k.kind || '—'), td(k.blocks_read, 'num'),
        td(k.blocks_lost, k.blocks_lost ? 'num bad' : 'num'), td(k.lag_blocks, 'num'), td(k.errors, k.errors ? 'num bad' : 'num'),
        td(k.proc_p50_ns ? (k.proc_p50_ns / 1e3).toFixed(1) + ' / ' + (k.proc_p99_ns / 1e3).toFixed(1) : '—', 'num')));
    }
  }
}

function drawKeys(keys) {
  const body = document.querySelector('#keys tbody');
  body.replaceChildren();
  for (const k of keys) {
    let text = k.value === null ? (k.shape || k.type) : (typeof k.value === 'number' ? k.value.toPrecision(6) : String(k.value));
    if (text.length > 40) text = text.slice(0, 40) + '…';
    const hist = state.keyHistory.get(k.key) || [];
    if (typeof k.value === 'number') {
      hist.push(k.value);
      if (hist.length > SPARK_POINTS) hist.shift();
      state.keyHistory.set(k.key, hist);
    }
    const spark = el('canvas', { class: 'spark', width: 90, height: 18 });
    drawSpark(spark, hist);
    body.append(el('tr', {}, td(k.key), td(text, 'num'), el('td', {}, spark)));
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

// ---- views and the WebSocket -------------------------------------------------------------------
function setStatus() {
  const ws = state.ws && state.ws.readyState === WebSocket.OPEN ? 'live' : 'reconnecting';
  document.getElementById('status').textContent = `${ws} · ${state.channels.length} channel(s) · ${debug.framesReceived} frames`;
}

function connect() {
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + location.pathname.replace(/[^/]*$/, '') + 'ws';
  const ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => { state.ws = ws; sendViews(); };
  ws.onmessage = (m) => { if (m.data instanceof ArrayBuffer) onFrame(m.data, performance.now()); };
  ws.onclose = () => { state.ws = null; setTimeout(connect, 1000); };
}

function sendViews() {
  if (!state.ws || state.ws.readyState !== WebSocket.OPEN) return;
  const views = state.views.map((v) => v.kind === 'spectrum'
    ? { channel: v.index, kind: 'spectrum' }
    : { channel: v.index, kind: 'envelope', span: Math.round(v.span), offset: Math.round(v.offset), columns: v.columns(),
        trigger: v.trigger, level: v.level });
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

function onFrame(buf, arrived) {
  const f = decode(buf);
  if (!f) return;
  debug.framesReceived++;
  for (const v of state.views) {
    if (v.index !== f.channel || v.paused) continue;
    if (v.kind === 'spectrum' && f.kind === KIND_SPECTRUM) v.frame = f;
    else if (v.kind === 'scope' && f.kind === KIND_ENVELOPE && f.span === Math.round(clampSpan(v, v.span))) v.frame = f;
    else continue;
    v.arrived = arrived;
    v.dirty = true;
  }
}

function clampSpan(v, span) {
  const c = state.byName.get(v.name);
  const min = Math.max(2, Math.ceil(MIN_SPAN_S * (c ? c.rate_hz : 1e6)));
  const max = c && c.pyramid_reach_samples ? c.pyramid_reach_samples : 1 << 30;
  return Math.min(max, Math.max(min, span));
}

function toggleView(name) {
  const at = state.views.findIndex((v) => v.name === name);
  if (at >= 0) {
    state.views[at].node.remove();
    state.views.splice(at, 1);
  } else {
    openView(name);
  }
  drawChannelTables();
  sendViews();
}

function openView(name, options = {}) {
  const c = state.byName.get(name);
  if (!c) return null;
  const v = c.frame ? spectrumView(c) : scopeView(c, options);
  document.getElementById('views').prepend(v.node);
  state.views.push(v);
  sendViews();
  return v;
}

function scopeView(c, options) {
  const canvas = el('canvas', { width: 1000, height: 260 });
  const readout = el('div', { class: 'readout' });
  const v = { kind: 'scope', name: c.name, index: c.index, canvas, readout, span: options.span || 4 * c.samples_per_block,
    offset: 0, trigger: 'off', level: 0, paused: false, frame: null, dirty: false, columns: () => canvas.width };
  v.span = clampSpan(v, v.span);
  const zoom = (factor) => { v.span = clampSpan(v, v.span * factor); sendViews(); };
  const level = el('input', { class: 'level', type: 'number', step: 'any', value: '0',
    onchange: (e) => { v.level = Number(e.target.value); sendViews(); } });
  const trig = el('select', { onchange: (e) => { v.trigger = e.target.value; sendViews(); } },
    el('option', { value: 'off' }, 'trigger off'), el('option', { value: 'rising' }, 'rising edge'), el('option', { value: 'falling' }, 'falling edge'));
  const pause = el('button', { onclick: () => { v.paused = !v.paused; pause.textContent = v.paused ? 'run' : 'pause'; } }, 'pause');
  const span = el('span');
  v.spanLabel = span;
  v.node = el('div', { class: 'view' },
    el('div', { class: 'bar' }, el('span', { class: 'title' }, c.name), span,
      el('button', { onclick: () => zoom(0.5) }, 'zoom +'), el('button', { onclick: () => zoom(2) }, 'zoom −'),
      el('button', { onclick: () => { v.offset += v.span / 2; sendViews(); } }, '◀'),
      el('button', { onclick: () => { v.offset = Math.max(0, v.offset - v.span / 2); sendViews(); } }, '▶'),
      el('button', { onclick: () => { v.offset = 0; sendViews(); } }, 'live'), trig, 'level', level, pause,
      el('button', { onclick: () => toggleView(c.name) }, '✕')),
    canvas, readout);
  canvas.addEventListener('wheel', (e) => { e.preventDefault(); zoom(e.deltaY > 0 ? 1.25 : 0.8); });
  let drag = null;
  canvas.addEventListener('mousedown', (e) => { drag = { x: e.offsetX, offset: v.offset }; });
  window.addEventListener('mouseup', () => { drag = null; });
  canvas.addEventListener('mousemove', (e) => {
    if (drag) {
      const samplesPerPx = v.span / canvas.clientWidth;
      v.offset = Math.max(0, drag.offset + (e.offsetX - drag.x) * samplesPerPx);
      sendViews();
    }
    v.cursor = e.offsetX / canvas.clientWidth;
    v.dirty = true;
  });
  canvas.addEventListener('mouseleave', () => { v.cursor = null; v.dirty = true; });
  return v;
}

function spectrumView(c) {
  const canvas = el('canvas', { width: 1000, height: 260 });
  const readout = el('div', { class: 'readout' });
  const v = { kind: 'spectrum', name: c.name, index: c.index, canvas, readout, frame: null, paused: false, dirty: false };
  const pause = el('button', { onclick: () => { v.paused = !v.paused; pause.textContent = v.paused ? 'run' : 'pause'; } }, 'pause');
  v.node = el('div', { class: 'view' },
    el('div', { class: 'bar' }, el('span', { class: 'title' }, c.name), el('span', {}, `spectrum, ${c.frame.frame_elements} bins, ` +
      `${c.frame.axis.name || 'index'} [${c.frame.axis.units}], log axes, dB; averaging as the fft shard's parameters set it`),
      pause, el('button', { onclick: () => toggleView(c.name) }, '✕')),
    canvas, readout);
  canvas.addEventListener('mousemove', (e) => { v.cursor = e.offsetX / canvas.clientWidth; v.dirty = true; });
  canvas.addEventListener('mouseleave', () => { v.cursor = null; v.dirty = true; });
  return v;
}

// ---- drawing ----------------------------------------------------------------------------------
function yRange(a, b) {
  let lo = Infinity, hi = -Infinity;
  for (let i = 0; i < a.length; i++) {
    if (isFinite(a[i])) lo = Math.min(lo, a[i]);
    if (b && isFinite(b[i])) hi = Math.max(hi, b[i]); else if (!b && isFinite(a[i])) hi = Math.max(hi, a[i]);
  }
  if (!isFinite(lo)) return [-1, 1];
  if (hi - lo < 1e-12) return [lo - 1, hi + 1];
  const pad = (hi - lo) * 0.05;
  return [lo - pad, hi + pad];
}

function grid(g, w, h) {
  g.strokeStyle = '#222';
  g.beginPath();
  for (let i = 1; i < 10; i++) { g.moveTo((i * w) / 10, 0); g.lineTo((i * w) / 10, h); }
  for (let i = 1; i < 8; i++) { g.moveTo(0, (i * h) / 8); g.lineTo(w, (i * h) / 8); }
  g.stroke();
}

function drawScope(v) {
  const f = v.frame, c = state.byName.get(v.name), g = v.canvas.getContext('2d');
  const w = v.canvas.width, h = v.canvas.height;
  g.fillStyle = '#000'; g.fillRect(0, 0, w, h);
  grid(g, w, h);
  const rate = c ? c.rate_hz : 1, units = c ? c.units : '';
  v.spanLabel.textContent = `span ${si(v.span / rate, 's')}` + (v.offset ? `, ${si(v.offset / rate, 's')} back` : ', live');
  if (!f) return;
  const [lo, hi] = yRange(f.a, f.b);
  const y = (val) => h - 1 - ((val - lo) / (hi - lo)) * (h - 2);
  const colW = w / f.n;
  g.fillStyle = '#4f4';
  for (let i = 0; i < f.n; i++) {
    if (!isFinite(f.a[i]) || !isFinite(f.b[i])) continue;
    const top = y(f.b[i]), bottom = y(f.a[i]);
    g.fillRect(Math.floor(i * colW), top, Math.max(1, Math.ceil(colW)), Math.max(1, bottom - top));
  }
  if (v.trigger !== 'off') {
    g.strokeStyle = '#f80'; g.setLineDash([4, 4]); g.beginPath(); g.moveTo(0, y(v.level)); g.lineTo(w, y(v.level)); g.stroke(); g.setLineDash([]);
  }
  g.fillStyle = '#888';
  g.fillText(`${si(hi, units)}`, 4, 12);
  g.fillText(`${si(lo, units)}`, 4, h - 4);
  g.fillText(f.flags & FLAG_TRIGGERED ? 'triggered' : (v.trigger !== 'off' ? 'auto' : ''), w - 60, 12);
  if (v.cursor != null) {
    const i = Math.min(f.n - 1, Math.floor(v.cursor * f.n));
    const t = (f.first + (i + 0.5) * f.step - f.anchor) / rate;
    g.strokeStyle = '#888'; g.beginPath(); g.moveTo(v.cursor * w, 0); g.lineTo(v.cursor * w, h); g.stroke();
    v.readout.textContent = `t ${si(t, 's')}  min ${si(f.a[i], units)}  max ${si(f.b[i], units)}` + (f.flags & FLAG_RAW ? '  (raw samples)' : '');
  }
}

function drawSpectrum(v) {
  const f = v.frame, c = state.byName.get(v.name), g = v.canvas.getContext('2d');
  const w = v.canvas.width, h = v.canvas.height;
  g.fillStyle = '#000'; g.fillRect(0, 0, w, h);
  grid(g, w, h);
  if (!f || f.n < 2) return;
  const units = c && c.frame ? c.frame.axis.units : '';
  const x0 = f.first + f.step > 0 ? Math.max(f.first, f.step) : 1;                  // the first positive bin
  const x1 = f.first + (f.n - 1) * f.step;
  const lx = (x) => (Math.log10(x) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0)) * w;
  const db = new Float32Array(f.n);
  for (let i = 0; i < f.n; i++) db[i] = 10 * Math.log10(Math.max(f.a[i], 1e-30));
  const [lo, hi] = yRange(db, null);
  const y = (d) => h - 1 - ((d - lo) / (hi - lo)) * (h - 2);
  g.strokeStyle = '#6cf'; g.beginPath();
  let peak = -1;
  for (let i = 0; i < f.n; i++) {
    const x = f.first + i * f.step;
    if (x < x0) continue;
    if (peak < 0 || db[i] > db[peak]) peak = i;
    const px = lx(x);
    i && x > x0 ? g.lineTo(px, y(db[i])) : g.moveTo(px, y(db[i]));
  }
  g.stroke();
  g.fillStyle = '#888';
  g.fillText(`${hi.toFixed(1)} dB`, 4, 12); g.fillText(`${lo.toFixed(1)} dB`, 4, h - 4);
  g.fillText(si(x0, units), 4, h - 16); g.fillText(si(x1, units), w - 70, h - 16);
  const peakX = f.first + peak * f.step;
  v.peak = { bin: peak, x: peakX, db: db[peak] };
  let text = `frame ${f.anchor}  peak ${si(peakX, units)} ${db[peak].toFixed(1)} dB`;
  if (v.cursor != null) {
    const x = Math.pow(10, Math.log10(x0) + v.cursor * (Math.log10(x1) - Math.log10(x0)));
    const i = Math.max(0, Math.min(f.n - 1, Math.round((x - f.first) / f.step)));
    text += `   cursor ${si(f.first + i * f.step, units)} ${db[i].toFixed(1)} dB`;
    g.strokeStyle = '#888'; g.beginPath(); g.moveTo(v.cursor * w, 0); g.lineTo(v.cursor * w, h); g.stroke();
  }
  v.readout.textContent = text;
}

function drawMca() {
  const panel = document.getElementById('mca-panel');
  panel.hidden = state.mca.length === 0;
  if (!state.mca.length) return;
  const select = document.getElementById('mca-select');
  const names = state.mca.map((m) => m.name);
  if ([...select.options].map((o) => o.value).join() !== names.join()) select.replaceChildren(...names.map((n) => el('option', { value: n }, n)));
  const m = state.mca.find((x) => x.name === select.value) || state.mca[0];
  document.getElementById('mca-info').textContent =
    `live ${m.live_s.toFixed(1)} s, dead ${m.dead_s.toFixed(2)} s, ${m.accepted} counts, ${m.pileups} pile-ups`;
  const canvas = document.getElementById('mca'), g = canvas.getContext('2d'), w = canvas.width, h = canvas.height;
  g.fillStyle = '#000'; g.fillRect(0, 0, w, h);
  grid(g, w, h);
  const n = m.counts.length, maxCount = Math.max(1, ...m.counts);
  const ly = (c) => h - 1 - (Math.log10(c + 1) / Math.log10(maxCount + 1)) * (h - 2);
  g.fillStyle = '#fc6';
  for (let i = 0; i < n; i++) g.fillRect((i * w) / n, ly(m.counts[i]), Math.max(1, w / n), h - ly(m.counts[i]));
  const e0 = m.energy.length ? m.energy[0] : 0, e1 = m.energy.length ? m.energy[n - 1] : n;
  g.fillStyle = '#888';
  g.fillText(`${e0.toPrecision(3)} ${m.units}`, 4, h - 4); g.fillText(`${e1.toPrecision(4)} ${m.units}`, w - 80, h - 4);
  g.fillText(`${maxCount} counts (log)`, 4, 12);
  canvas.onmousemove = (e) => {
    const i = Math.min(n - 1, Math.floor((e.offsetX / canvas.clientWidth) * n));
    document.getElementById('mca-readout').textContent = `bin ${i}  ${m.energy.length ? m.energy[i].toPrecision(5) : i} ${m.units}  ${m.counts[i]} counts`;
  };
}

function frameLoop() {
  for (const v of state.views) {
    if (!v.dirty) continue;
    v.dirty = false;
    v.kind === 'spectrum' ? drawSpectrum(v) : drawScope(v);
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
debug.open = (name, options) => state.views.find((v) => v.name === name) || openView(name, options || {});
debug.setSpan = (name, samples) => {
  const v = state.views.find((x) => x.name === name);
  if (v) { v.span = clampSpan(v, samples); v.frame = null; sendViews(); }
  return v ? v.span : null;
};
debug.frame = (name) => {
  const v = state.views.find((x) => x.name === name);
  if (!v || !v.frame) return null;
  const f = v.frame;
  let max = -Infinity;
  for (const x of (f.b || f.a)) if (isFinite(x)) max = Math.max(max, x);
  return { kind: f.kind, n: f.n, span: f.span, first: f.first, step: f.step, anchor: f.anchor, flags: f.flags, max,
    peak: v.peak || null, values: f.kind === KIND_SPECTRUM ? Array.from(f.a) : null };
};
debug.channels = () => state.channels.map((c) => c.name);

refresh().then(connect);
setInterval(refresh, 1000);
requestAnimationFrame(frameLoop);
