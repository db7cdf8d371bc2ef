// The spectrum view: a frame channel (the fft shard's output) in dB with its reference named, on a
// true log-frequency grid (decades with lines at 2..9) or a linear one, with cursor and peak readouts.
/* global uPlot */
import { el, logTickLabels, prettyUnits, reading, si, tickLabels } from './util.js';

export const KIND_SPECTRUM = 2;
const HEIGHT = 300;

/** How a channel's values become dB, and what the dB are relative to. The fft shard writes amplitude
 *  (units), power (units^2), PSD (units^2/Hz), or any of them already in dB ("dBV^2/Hz"). No channel
 *  names a full scale, so the reference is one unit of the channel's own units. */
export function decibels(units) {
  const u = String(units || '');
  const already = /^dB/.test(u);
  const base = already ? u.slice(2) : u;
  const power = /\^2|\/Hz$/.test(base);
  const plain = base.replace(/\^2/, '').replace(/\/Hz$/, '').replace(/^1$/, '');
  let label = base === '' ? 'dB (no units)' : base === '/Hz' || base === '1/Hz' ? 'dB re 1/Hz' : `dB re 1 ${prettyUnits(base)}`;
  const symbol = /^[A-Za-zΩµ]{1,3}$/.test(plain);  // dBV, dBA: only for a plain unit symbol
  if (power && /\/Hz$/.test(base) && symbol) label += ` (dB${plain}/√Hz)`;
  else if (!power && symbol) label = `dB${plain} (dB re 1 ${plain})`;
  return { already, factor: power ? 10 : 20, label };
}

export function createSpectrum(app, name, options = {}) {
  const v = { kind: 'spectrum', name, paused: false, frame: null, dirty: false, log: options.log !== '0', u: null,
    units: null, axisUnits: 'Hz', peak: null, yShown: null };
  const badge = el('span', { class: 'badge', hidden: '' });
  const about = el('span', { class: 'about' });
  const refLabel = el('span', { class: 'dbref' });
  const logToggle = el('button', { class: 'logx', onclick: () => { v.log = !v.log; rebuild(); app.saveHash(); } });
  const pause = el('button', { onclick: () => { v.paused = !v.paused; pause.textContent = v.paused ? 'run' : 'pause'; } }, 'pause');
  const plot = el('div', { class: 'plot' });
  const r = { f: reading('cf', 'cursor'), level: reading('cl', ''), pf: reading('pf', 'peak'), pl: reading('pl', '') };
  v.node = el('div', { class: 'view spectrum', 'data-name': name },
    el('div', { class: 'bar' }, el('span', { class: 'title' }, name), badge, about, refLabel, logToggle, pause,
      el('button', { onclick: () => app.close(v) }, '✕')),
    plot, el('div', { class: 'readout' }, r.pf.node, r.pl.node, r.f.node, r.level.node));

  function yRange(u, dmin, dmax) {
    if (dmin === null || dmax === null || !isFinite(dmin) || !isFinite(dmax)) return v.yShown || [-120, 0];
    const hi = Math.ceil((dmax + 1) / 10) * 10;
    const lo = Math.max(Math.floor(dmin / 10) * 10, hi - 160);
    v.yShown = hi > lo ? [lo, hi] : [hi - 10, hi];
    return v.yShown;
  }

  function rebuild() {
    if (v.u) v.u.destroy();
    logToggle.textContent = v.log ? 'log f → linear' : 'linear f → log';
    const db = decibels(v.units);
    refLabel.textContent = db.label;
    const x = { label: `frequency [${v.axisUnits}]`, stroke: '#aaa', grid: { stroke: '#2c2c2c', width: 1 }, ticks: { stroke: '#555' },
      values: v.log ? logTickLabels(v.axisUnits) : tickLabels(v.axisUnits), space: v.log ? 30 : 60 };
    const y = { label: db.label, stroke: '#aaa', size: 70, grid: { stroke: '#2c2c2c', width: 1 }, ticks: { stroke: '#555' },
      values: (u, splits) => splits.map((s) => (s === null ? '' : `${Math.round(s)} dB`)) };
    const opts = {
      width: Math.max(300, plot.clientWidth || 1000), height: HEIGHT, legend: { show: false },
      cursor: { drag: { x: false, y: false, setScale: false }, y: false },
      scales: { x: v.log ? { time: false, distr: 3, log: 10 } : { time: false }, y: { range: yRange } },
      axes: [x, y],
      series: [{}, { label: 'level', stroke: '#6cf', width: 1, points: { show: false } }],
      hooks: { setCursor: [showCursor], draw: [drawPeak] },
    };
    v.u = new uPlot(opts, v.data ? slice(v.data) : [[], []], plot);
  }

  // A log axis has no place for 0 Hz: the view starts at the first positive bin.
  function slice(data) {
    if (!v.log) return data;
    const from = data[0].findIndex((f) => f > 0);
    return from <= 0 ? data : [data[0].slice(from), data[1].slice(from)];
  }

  function showCursor(u) {
    const i = u.cursor.idx;
    if (i === null || i === undefined || !u.data[0].length) { r.f.set(null, '—'); r.level.set(null, ''); return; }
    r.f.set(u.data[0][i], si(u.data[0][i], v.axisUnits));
    r.level.set(u.data[1][i], u.data[1][i] === null ? '—' : `${u.data[1][i].toFixed(1)} dB`);
  }

  function drawPeak(u) {
    if (!v.peak) return;
    const dpr = devicePixelRatio || 1, ctx = u.ctx;
    const x = u.valToPos(v.peak.x, 'x', true), y = u.valToPos(v.peak.db, 'y', true);
    if (!isFinite(x) || !isFinite(y)) return;
    ctx.save();
    ctx.fillStyle = '#fc6';
    ctx.beginPath(); ctx.moveTo(x, y - 3 * dpr); ctx.lineTo(x - 5 * dpr, y - 12 * dpr); ctx.lineTo(x + 5 * dpr, y - 12 * dpr); ctx.fill();
    ctx.restore();
  }

  v.setChannel = (c) => {
    badge.hidden = !(!c || c.stale);
    badge.textContent = !c ? 'no such channel (yet)' : `stale: newest block ${si(c.newest_block_age_s, 's', 3)} old`;
    v.stale = !!(c && c.stale);
    if (!c) return;
    const axis = c.frame ? c.frame.axis : { name: 'index', units: '' };
    if (v.units !== c.units || !v.u) {
      v.units = c.units || '';
      v.axisUnits = axis.units || '';
      about.textContent = `${c.frame ? c.frame.frame_elements : '?'} bins of ${si(axis.step, v.axisUnits)}, ` +
        'windowed and averaged as the fft shard\'s parameters set it';
      rebuild();
    }
  };
  v.request = () => ({ kind: 'spectrum' });
  v.hashPart = () => (v.log ? [] : ['log=0']);
  v.accepts = (f) => f.kind === KIND_SPECTRUM && !v.paused;
  v.onFrame = (f) => { v.frame = f; v.dirty = true; };
  v.draw = () => {
    const f = v.frame;
    if (!f || !v.u) return;
    const db = decibels(v.units);
    const xs = new Array(f.n), ys = new Array(f.n);
    let peak = -1;
    for (let i = 0; i < f.n; i++) {
      xs[i] = f.first + i * f.step;
      const a = f.a[i];
      ys[i] = !isFinite(a) ? null : db.already ? a : db.factor * Math.log10(Math.max(a, 1e-30));
      if (xs[i] > 0 && ys[i] !== null && (peak < 0 || ys[i] > ys[peak])) peak = i;
    }
    v.data = [xs, ys];
    v.peak = peak >= 0 ? { bin: peak, x: xs[peak], db: ys[peak] } : null;
    if (v.peak) { r.pf.set(v.peak.x, si(v.peak.x, v.axisUnits)); r.pl.set(v.peak.db, `${v.peak.db.toFixed(1)} dB`); }
    v.u.setData(slice(v.data));
  };
  v.pos = (x) => (v.u ? v.u.valToPos(x, 'x') : null);
  v.resize = () => { if (v.u) v.u.setSize({ width: Math.max(300, plot.clientWidth), height: HEIGHT }); };
  v.info = () => {
    const u = v.u;
    if (!u) return null;
    return { xTicks: u.axes[0]._values, yTicks: u.axes[1]._values, xSplits: u.axes[0]._splits, ySplits: u.axes[1]._splits,
      xLabel: u.axes[0].label, yLabel: u.axes[1].label, xDistr: u.scales.x.distr, x: [u.scales.x.min, u.scales.x.max],
      reference: refLabel.textContent, peak: v.peak, stale: v.stale };
  };
  return v;
}
