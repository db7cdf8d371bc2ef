// The MCA panel: the events shard's pulse-height histograms from /api/mca as bars on uPlot axes,
// counts against energy (or bin), log or linear counts, with pulses outside the range counted apart.
/* global uPlot */
import { el, reading, si, tickLabels } from './util.js';

const HEIGHT = 280;

export function createMca(panel) {
  const select = panel.querySelector('#mca-select');
  const info = panel.querySelector('#mca-info');
  const outside = panel.querySelector('#mca-outside');
  const plot = panel.querySelector('#mca');
  const logToggle = panel.querySelector('#mca-log');
  const hover = reading('mca-hover', '');
  panel.querySelector('#mca-readout').append(hover.node);
  const m = { log: true, u: null, shape: '', list: [], current: null };

  function yRange(u, dmin, dmax) {
    if (m.log) return [1, Math.pow(10, Math.max(1, Math.ceil(Math.log10(Math.max(dmax || 1, 1) * 1.5))))];
    return [0, Math.max(1, (dmax || 1) * 1.08)];
  }

  function rebuild(units) {
    if (m.u) m.u.destroy();
    logToggle.textContent = m.log ? 'counts: log → linear' : 'counts: linear → log';
    const xUnits = units || '';
    const opts = {
      width: Math.max(300, plot.clientWidth || 900), height: HEIGHT, legend: { show: false },
      cursor: { drag: { x: false, y: false, setScale: false }, y: false, points: { show: false } },
      scales: { x: { time: false }, y: m.log ? { distr: 3, log: 10, range: yRange } : { range: yRange } },
      axes: [
        { label: units ? `energy [${units}]` : 'pulse height [bin]', stroke: '#aaa', grid: { stroke: '#262626' },
          ticks: { stroke: '#555' }, values: tickLabels(xUnits), space: 70 },
        { label: m.log ? 'counts (log)' : 'counts', stroke: '#aaa', size: 70, grid: { stroke: '#262626' }, ticks: { stroke: '#555' },
          values: (u, splits) => splits.map((s) => (s === null ? '' : s >= 1e5 ? s.toExponential(0) : String(Math.round(s)))) },
      ],
      series: [{}, { label: 'counts', stroke: '#fc6', fill: 'rgba(255, 204, 102, 0.75)', width: 0, points: { show: false },
        paths: uPlot.paths.bars({ size: [1, 200], gap: 0, align: 0 }) }],
      hooks: { setCursor: [(u) => {
        const i = u.cursor.idx;
        if (i === null || i === undefined || !m.current) return hover.set(null, '');
        const h = m.current;
        hover.set(h.counts[i], `bin ${i}  ${h.energy.length ? si(h.energy[i], h.units) : ''}  ${h.counts[i]} counts`);
      }] },
    };
    m.u = new uPlot(opts, [[], []], plot);
  }

  logToggle.addEventListener('click', () => { m.log = !m.log; m.shape = ''; m.update(m.list); });
  select.addEventListener('change', () => { m.shape = ''; m.update(m.list); });

  m.update = (list) => {
    m.list = list;
    panel.hidden = list.length === 0;
    if (!list.length) return;
    const names = list.map((x) => x.name);
    if ([...select.options].map((o) => o.value).join() !== names.join()) select.replaceChildren(...names.map((n) => el('option', { value: n }, n)));
    const h = list.find((x) => x.name === select.value) || list[0];
    m.current = h;
    info.textContent = `live ${h.live_s.toFixed(1)} s, dead ${h.dead_s.toFixed(2)} s, ${h.accepted} counts, ${h.pileups} pile-ups`;
    const has = (k) => typeof h[k] === 'number';
    outside.hidden = !(has('underflow') || has('overflow'));
    outside.textContent = `outside the range: underflow ${has('underflow') ? h.underflow : '—'} / overflow ${has('overflow') ? h.overflow : '—'}`;
    const n = h.counts.length;
    const xs = h.energy.length === n ? Array.from(h.energy) : Array.from({ length: n }, (_, i) => i);
    const ys = h.counts.map((c) => (m.log && c <= 0 ? null : c));
    const shape = `${h.name}|${n}|${h.units}|${m.log}`;
    if (shape !== m.shape) { m.shape = shape; rebuild(h.energy.length === n ? h.units : ''); }
    m.u.setData([xs, ys]);
  };
  m.resize = () => { if (m.u) m.u.setSize({ width: Math.max(300, plot.clientWidth), height: HEIGHT }); };
  m.info = () => (m.u ? { xTicks: m.u.axes[0]._values, yTicks: m.u.axes[1]._values, xLabel: m.u.axes[0].label,
    yDistr: m.u.scales.y.distr, outside: outside.hidden ? '' : outside.textContent } : null);
  return m;
}
