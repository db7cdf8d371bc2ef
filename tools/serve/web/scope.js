// The scope view: a channel's min/max envelope (one vertical bar per column, so a one-sample spike
// stays visible at every zoom) on uPlot axes: time in seconds before the newest sample, amplitude in
// the channel's units, an oscilloscope's 10 x 8 divisions as an option, hold/auto/fixed Y scaling,
// two cursors (click: A, then B) with Δt, 1/Δt and ΔV, empty buckets drawn as shaded 'gap' bands.
/* global uPlot */
import { el, nice125, reading, si, tickLabels } from './util.js';

export const KIND_ENVELOPE = 1;
const FLAG_TRIGGERED = 1, FLAG_RAW = 2;
const MIN_SPAN_S = 10e-6;          // the finest zoom: 10 µs
const HEIGHT = 300;
const GAP_FILL = 'rgba(255, 96, 96, 0.28)';
const CURSOR_COLOURS = ['#ff0', '#0ff'];

// One filled rectangle per column from min to max, at least a pixel tall and wide, reaching to the
// previous column's range so that sparse raw samples read as a trace (never across a gap).
function envelopePaths(u, seriesIdx, idx0, idx1) {
  const path = new Path2D();
  const [xs, lo, hi] = u.data;
  const n = xs.length;
  if (n === 0) return null;
  const half = n > 1 ? Math.abs(u.valToPos(xs[1], 'x', true) - u.valToPos(xs[0], 'x', true)) / 2 : 1;
  for (let i = idx0; i <= idx1; i++) {
    if (lo[i] === null || hi[i] === null) continue;
    const joined = i > 0 && lo[i - 1] !== null && hi[i - 1] !== null;
    const low = joined ? Math.min(lo[i], hi[i - 1]) : lo[i], high = joined ? Math.max(hi[i], lo[i - 1]) : hi[i];
    const x = u.valToPos(xs[i], 'x', true);
    const top = u.valToPos(high, 'y', true), bottom = u.valToPos(low, 'y', true);
    const w = Math.max(1, 2 * half);
    path.rect(x - w / 2, top, w, Math.max(1, bottom - top));
  }
  return { stroke: path, fill: path, clip: null, band: null, gaps: null, flags: 0 };
}

export function createScope(app, name, options = {}) {
  const v = {
    kind: 'scope', name, span: 0, spanS: Number(options.span) || 0, offset: 0, offsetS: Number(options.off) || 0,
    trigger: options.trig || 'off', level: Number(options.level) || 0, paused: false,
    divisions: options.div === '1', yMode: options.y || 'auto',
    yFixed: [Number(options.ymin ?? -1), Number(options.ymax ?? 1)], yHeld: null, yShown: null,
    frame: null, asked: 0, changedAt: 0, dirty: false, cursors: [null, null], nextCursor: 0, gaps: [], rate: 0,
    units: '', stale: false, u: null,
  };
  const title = el('span', { class: 'title' }, name);
  const badge = el('span', { class: 'badge', hidden: '' });
  const spanLabel = el('span', { class: 'span' });
  const history = el('span', { class: 'history' });
  const perDiv = el('span', { class: 'perdiv' });
  const trig = el('select', { class: 'trigger', onchange: (e) => { v.trigger = e.target.value; changed(); } },
    ...['off', 'rising', 'falling'].map((t) => el('option', { value: t }, t === 'off' ? 'trigger off' : t + ' edge')));
  trig.value = v.trigger;
  const level = el('input', { class: 'level', type: 'number', step: 'any', value: String(v.level),
    onchange: (e) => { v.level = Number(e.target.value); changed(); } });
  const yMode = el('select', { class: 'ymode', onchange: (e) => setYMode(e.target.value) },
    el('option', { value: 'auto' }, 'Y auto'), el('option', { value: 'hold' }, 'Y hold'), el('option', { value: 'fixed' }, 'Y fixed'));
  yMode.value = v.yMode;
  const yMin = el('input', { class: 'level ymin', type: 'number', step: 'any', value: String(v.yFixed[0]),
    onchange: (e) => { v.yFixed[0] = Number(e.target.value); changed(false); } });
  const yMax = el('input', { class: 'level ymax', type: 'number', step: 'any', value: String(v.yFixed[1]),
    onchange: (e) => { v.yFixed[1] = Number(e.target.value); changed(false); } });
  const fixedInputs = el('span', { class: 'fixed' }, 'min', yMin, 'max', yMax);
  const divs = el('input', { type: 'checkbox', class: 'divisions',
    onchange: (e) => { v.divisions = e.target.checked; rebuild(); changed(false); } });
  divs.checked = v.divisions;
  const pause = el('button', { class: 'pause', onclick: () => { v.paused = !v.paused; pause.textContent = v.paused ? 'run' : 'pause'; } }, 'pause');
  const plot = el('div', { class: 'plot' });
  const hover = el('div', { class: 'readout hover' });
  const r = { ta: reading('ta', 't_A'), va: reading('va', 'V_A'), tb: reading('tb', 't_B'), vb: reading('vb', 'V_B'),
    dt: reading('dt', 'Δt'), f: reading('f', '1/Δt'), dv: reading('dv', 'ΔV') };
  const cursorLine = el('div', { class: 'readout cursors' }, ...Object.values(r).map((x) => x.node),
    el('button', { onclick: () => { v.cursors = [null, null]; v.nextCursor = 0; v.dirty = true; } }, 'clear cursors'));
  // Zoom by a factor; on the divisions grid, to the next 1-2-5 time per division as a scope's knob turns.
  const zoom = (factor) => {
    if (v.divisions && v.rate) {
      const perDivS = v.span / v.rate / 10, next = factor > 1 ? nice125(perDivS * 1.01) : nice125(perDivS / 2.6);
      v.span = clampSpan(10 * next * v.rate);
    } else {
      v.span = clampSpan(v.span * factor);
    }
    changed();
  };
  v.node = el('div', { class: 'view scope', 'data-name': name },
    el('div', { class: 'bar' }, title, badge, spanLabel, history,
      el('button', { onclick: () => zoom(0.5) }, 'zoom +'), el('button', { onclick: () => zoom(2) }, 'zoom −'),
      el('button', { class: 'back', onclick: () => { v.offset += Math.round(v.span / 2); changed(); } }, '◀'),
      el('button', { onclick: () => { v.offset = Math.max(0, v.offset - Math.round(v.span / 2)); changed(); } }, '▶'),
      el('button', { onclick: () => { v.offset = 0; changed(); } }, 'live'), trig, 'level', level, pause,
      yMode, fixedInputs, el('label', {}, divs, '10 × 8 div'), perDiv,
      el('button', { onclick: () => app.close(v) }, '✕')),
    plot, hover, cursorLine);
  fixedInputs.hidden = v.yMode !== 'fixed';

  function clampSpan(span) {
    const c = app.channel(name);
    const min = Math.max(2, Math.ceil(MIN_SPAN_S * (c ? c.rate_hz : 1e6)));
    const max = c && c.pyramid_reach_samples ? c.pyramid_reach_samples : 1 << 30;
    return Math.round(Math.min(max, Math.max(min, span)));
  }
  function changed(request = true) {
    v.changedAt = performance.now();
    v.dirty = true;
    app.saveHash();
    if (request) app.send();
  }
  function setYMode(mode) {
    if (mode === 'hold') v.yHeld = v.yShown ? v.yShown.slice() : null;
    if (mode === 'fixed' && v.yShown && v.yMode !== 'fixed') {
      v.yFixed = v.yShown.slice();
      yMin.value = String(+v.yFixed[0].toPrecision(4));
      yMax.value = String(+v.yFixed[1].toPrecision(4));
    }
    v.yMode = mode;
    yMode.value = mode;
    fixedInputs.hidden = mode !== 'fixed';
    changed(false);
  }

  // Y range: fixed as typed, held as it was, or auto on a 1-2-5 grid (8 steps, so it does not jitter).
  function yRange(u, dmin, dmax) {
    let range;
    if (v.yMode === 'fixed' && v.yFixed[1] > v.yFixed[0]) range = v.yFixed.slice();
    else if (v.yMode === 'hold' && v.yHeld) range = v.yHeld.slice();
    else if (dmin === null || dmax === null || !isFinite(dmin) || !isFinite(dmax)) range = v.yShown || [-1, 1];
    else {
      const flat = dmax - dmin <= 1e-9 * Math.max(1, Math.abs(dmax));  // a constant: a range around it
      const spread = flat ? Math.max(Math.abs(dmax) * 0.2, 1) : dmax - dmin;
      let step = nice125(spread / 8);
      if (v.divisions) {
        for (let k = 0; k < 40; k++, step = nice125(step * 1.01)) {
          const lo = Math.round((dmin + dmax) / 2 / step) * step - 4 * step;
          if (lo <= dmin && lo + 8 * step >= dmax) { range = [lo, lo + 8 * step]; break; }
        }
      } else {
        const pad = 0.02 * spread;  // a trace never sits on the frame's edge
        const lo = Math.floor((dmin - pad) / step) * step, hi = Math.ceil((dmax + pad) / step) * step;
        range = hi > lo ? [lo, hi] : [lo - step, lo + step];
      }
      range = range || [dmin, dmax];
      if (v.yMode === 'hold') v.yHeld = range.slice();  // hold asked before any frame (from the address)
    }
    v.yShown = range;
    return range;
  }
  const evenSplits = (parts) => (u, axisIdx, min, max) => Array.from({ length: parts + 1 }, (_, k) => min + ((max - min) * k) / parts);

  function rebuild() {
    if (v.u) v.u.destroy();
    const units = v.units;
    const x = { label: 'time from the newest sample', stroke: '#aaa',
      grid: { stroke: v.divisions ? '#3a3a3a' : '#262626', width: 1 }, ticks: { stroke: '#555' }, values: tickLabels('s') };
    const y = { label: units ? `amplitude [${units}]` : 'amplitude', stroke: '#aaa', size: 80, grid: { stroke: v.divisions ? '#3a3a3a' : '#262626', width: 1 },
      ticks: { stroke: '#555' }, values: tickLabels(units) };
    if (v.divisions) { x.splits = evenSplits(10); y.splits = evenSplits(8); }
    const opts = {
      width: Math.max(300, plot.clientWidth || 1000), height: HEIGHT, legend: { show: false },
      cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false }, y: false },
      scales: { x: { time: false, range: () => v.xRange || [-1, 0] }, y: { range: yRange } },
      axes: [x, y],
      series: [{}, { label: 'min', paths: () => null, points: { show: false } },
        { label: 'max', stroke: '#4f4', fill: '#4f4', width: 0, paths: envelopePaths, points: { show: false } }],
      hooks: { draw: [drawOverlay], setCursor: [showHover] },
    };
    v.u = new uPlot(opts, v.data || [[], [], []], plot);
    attachMouse(v.u.over);
  }

  function drawOverlay(u) {
    const ctx = u.ctx, { top, height } = u.bbox;
    const dpr = devicePixelRatio || 1;
    ctx.save();
    ctx.font = `${12 * dpr}px system-ui, sans-serif`;
    v.drawnGaps = [];
    for (const [t0, t1] of v.gaps) {  // at least 6 pixels wide, so that a gap between two blocks shows
      const a = u.valToPos(t0, 'x', true), b = u.valToPos(t1, 'x', true);
      const w = Math.max(6 * dpr, b - a), x0 = (a + b) / 2 - w / 2;
      ctx.fillStyle = GAP_FILL;
      ctx.fillRect(x0, top, w, height);
      ctx.fillStyle = '#f88';
      ctx.fillText('gap', x0 + w + 2 * dpr, top + 14 * dpr);
      v.drawnGaps.push({ t0, t1, x0: (x0 - u.bbox.left) / dpr, x1: (x0 + w - u.bbox.left) / dpr });  // CSS px in the plot
    }
    if (v.trigger !== 'off') {
      const yl = u.valToPos(v.level, 'y', true);
      ctx.strokeStyle = '#f80'; ctx.setLineDash([4 * dpr, 4 * dpr]);
      ctx.beginPath(); ctx.moveTo(u.bbox.left, yl); ctx.lineTo(u.bbox.left + u.bbox.width, yl); ctx.stroke();
      ctx.setLineDash([]);
    }
    v.cursors.forEach((c, k) => {
      if (c === null) return;
      const xc = u.valToPos(c, 'x', true);
      ctx.strokeStyle = CURSOR_COLOURS[k]; ctx.lineWidth = dpr;
      ctx.beginPath(); ctx.moveTo(xc, top); ctx.lineTo(xc, top + height); ctx.stroke();
      ctx.fillStyle = CURSOR_COLOURS[k];
      ctx.fillText(k ? 'B' : 'A', xc + 3 * dpr, top + height - 4 * dpr);
    });
    if (v.frame && v.frame.flags & FLAG_TRIGGERED) { ctx.fillStyle = '#f80'; ctx.fillText('triggered', u.bbox.left + u.bbox.width - 70 * dpr, top + 14 * dpr); }
    ctx.restore();
  }

  // The value under a time: the column holding it (a sample when raw; else the middle of its min..max).
  function valueAt(t) {
    const f = v.frame;
    if (!f || !v.rate) return null;
    const i = Math.floor((t * v.rate + v.zero - f.first) / f.step);
    if (i < 0 || i >= f.n || !isFinite(f.a[i]) || !isFinite(f.b[i])) return null;
    return { i, min: f.a[i], max: f.b[i], value: (f.a[i] + f.b[i]) / 2 };
  }

  function showHover(u) {
    const idx = u.cursor.idx;
    if (idx === null || idx === undefined || !v.frame) { hover.textContent = ''; return; }
    const f = v.frame;
    hover.textContent = `t ${si(u.data[0][idx], 's')}  min ${si(f.a[idx], v.units)}  max ${si(f.b[idx], v.units)}` +
      (f.flags & FLAG_RAW ? '  (raw samples)' : '');
  }

  function attachMouse(over) {
    over.addEventListener('wheel', (e) => { e.preventDefault(); zoom(e.deltaY > 0 ? 1.25 : 0.8); });
    let down = null;
    over.addEventListener('mousedown', (e) => { down = { x: e.offsetX, offset: v.offset, moved: false }; });
    over.addEventListener('mousemove', (e) => {
      if (!down || Math.abs(e.offsetX - down.x) < 4) return;
      down.moved = true;
      v.offset = Math.max(0, Math.round(down.offset + ((e.offsetX - down.x) * v.span) / over.clientWidth));
      changed();
    });
    over.addEventListener('mouseup', (e) => {
      if (down && !down.moved && v.u) setCursor(v.nextCursor, v.u.posToVal(e.offsetX, 'x'));
      down = null;
    });
  }

  function setCursor(k, t) {
    v.cursors[k] = t;
    v.nextCursor = k ? 0 : 1;
    v.dirty = true;
  }

  function updateReadout() {
    const [a, b] = v.cursors.map((t) => (t === null ? null : { t, at: valueAt(t) }));
    const val = (c) => (c && c.at ? c.at.value : null);
    r.ta.set(a ? a.t : null, a ? si(a.t, 's') : '—');
    r.tb.set(b ? b.t : null, b ? si(b.t, 's') : '—');
    r.va.set(val(a), si(val(a), v.units));
    r.vb.set(val(b), si(val(b), v.units));
    const dt = a && b ? b.t - a.t : null;
    r.dt.set(dt, si(dt, 's'));
    r.f.set(dt ? 1 / Math.abs(dt) : null, dt ? si(1 / Math.abs(dt), 'Hz') : '—');
    const dv = val(a) !== null && val(b) !== null ? val(b) - val(a) : null;
    r.dv.set(dv, si(dv, v.units));
  }

  v.setChannel = (c) => {
    v.channelInfo = c;
    if (c && v.rate && (c.rate_hz !== v.rate || (c.units || '') !== v.units)) {  // another channel of that name now
      v.spanS = v.span / v.rate;
      v.offsetS = v.offset / v.rate;
      v.rate = 0;
      v.frame = null;
      v.data = null;
    }
    if (c && !v.rate) {
      v.rate = c.rate_hz;
      v.units = c.units || '';
      v.span = clampSpan(v.spanS ? v.spanS * c.rate_hz : 4 * c.samples_per_block);
      v.offset = Math.round(v.offsetS * c.rate_hz);
      rebuild();
      app.send();
    }
    v.stale = !!(c && c.stale);
    badge.hidden = !(v.stale || !c);
    badge.textContent = !c ? 'no such channel (yet)' : `stale: newest block ${si(c.newest_block_age_s, 's', 3)} old`;
  };
  v.request = () => (v.rate ? { kind: 'envelope', span: v.span, offset: v.offset, columns: v.columns(),
    trigger: v.trigger, level: v.level } : null);
  v.columns = () => Math.max(16, Math.round(v.u ? v.u.bbox.width / (devicePixelRatio || 1) : 1000));
  v.hashPart = () => {
    const parts = [`span=${+(v.rate ? v.span / v.rate : v.spanS).toPrecision(6)}`];
    if (v.offset && v.rate) parts.push(`off=${+(v.offset / v.rate).toPrecision(6)}`);
    if (v.divisions) parts.push('div=1');
    if (v.yMode !== 'auto') parts.push(`y=${v.yMode}`);
    if (v.yMode === 'fixed') parts.push(`ymin=${v.yFixed[0]}`, `ymax=${v.yFixed[1]}`);
    if (v.trigger !== 'off') parts.push(`trig=${v.trigger}`, `level=${v.level}`);
    return parts;
  };
  v.setSpan = (samples) => { v.span = clampSpan(samples); v.frame = null; changed(); return v.span; };
  // Frames made before the server read a new span may still arrive: right after a change, only a frame
  // whose span is near the one asked is taken (a span is rounded out to whole buckets, or cut at the
  // oldest sample there is, which the next frames show once the request has surely arrived).
  v.accepts = (f) => f.kind === KIND_ENVELOPE && !v.paused &&
    (Math.abs(f.span - v.span) <= 0.3 * v.span || performance.now() - v.changedAt > 300);
  v.onFrame = (f) => {
    v.frame = f;
    v.asked = v.span;
    v.dirty = true;
  };
  v.draw = () => {
    const f = v.frame;
    if (v.divisions && v.rate) perDiv.textContent = `${si(v.span / v.rate / 10, 's', 3)}/div · ` +
      (v.yShown ? `${si((v.yShown[1] - v.yShown[0]) / 8, v.units, 3)}/div` : '');
    else perDiv.textContent = '';
    spanLabel.textContent = v.rate ? `span ${si(v.span / v.rate, 's')}` + (v.offset ? `, ${si(v.offset / v.rate, 's')} back` : ', live') : '';
    if (!v.u) return;
    if (f) {
      // Time 0: the trigger point on a triggered frame, else the newest sample (a frame's anchor is the
      // end of its window, `offset` samples before the newest).
      const triggered = (f.flags & FLAG_TRIGGERED) !== 0;
      const zero = v.zero = triggered ? f.anchor : f.anchor + v.offset;
      v.u.axes[0].label = triggered ? 'time from the trigger' : 'time from the newest sample';
      if (!v.data || v.data[0].length !== f.n) v.data = [new Array(f.n), new Array(f.n), new Array(f.n)];
      const [xs, lo, hi] = v.data;  // reused frame after frame while the width stays
      const gaps = [];
      let gapFrom = -1;
      for (let i = 0; i < f.n; i++) {
        xs[i] = (f.first + (i + 0.5) * f.step - zero) / v.rate;
        const ok = isFinite(f.a[i]) && isFinite(f.b[i]);
        lo[i] = ok ? f.a[i] : null;
        hi[i] = ok ? f.b[i] : null;
        if (!ok && gapFrom < 0) gapFrom = i;
        if ((ok || i === f.n - 1) && gapFrom >= 0) {
          const end = ok ? i : f.n;
          gaps.push([(f.first + gapFrom * f.step - zero) / v.rate, (f.first + end * f.step - zero) / v.rate]);
          gapFrom = -1;
        }
      }
      v.gaps = gaps;
      v.xRange = [(f.first - zero) / v.rate, Math.min(triggered ? Infinity : 0, (f.first + f.n * f.step - zero) / v.rate)];
      const covered = Math.min(f.n * f.step, f.anchor - f.first);  // up to the newest sample at most
      history.textContent = covered < 0.98 * v.asked
        ? `history: ${si(covered / v.rate, 's', 3)} of ${si(v.asked / v.rate, 's', 3)} asked` : '';
      v.u.setData(v.data);
    } else {
      v.u.redraw(false);
    }
    updateReadout();
  };
  v.resize = () => { if (v.u) v.u.setSize({ width: Math.max(300, plot.clientWidth), height: HEIGHT }); };
  v.info = () => {
    const u = v.u;
    if (!u) return null;
    return { xTicks: u.axes[0]._values, yTicks: u.axes[1]._values, xSplits: u.axes[0]._splits, ySplits: u.axes[1]._splits,
      xLabel: u.axes[0].label, yLabel: u.axes[1].label, x: [u.scales.x.min, u.scales.x.max], y: [u.scales.y.min, u.scales.y.max],
      perDiv: perDiv.textContent, history: history.textContent, stale: !badge.hidden && v.stale, badge: badge.hidden ? '' : badge.textContent,
      gaps: v.drawnGaps || [], cursors: v.cursors.slice(), columns: v.columns() };
  };
  // Page x (CSS pixels from the plot area's left edge) of a time, for scripts that click there.
  v.pos = (t) => (v.u ? v.u.valToPos(t, 'x') : null);
  v.setCursor = setCursor;
  v.setYMode = setYMode;
  return v;
}
