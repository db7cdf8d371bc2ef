// Formatting and DOM helpers shared by the page's views: SI prefixes, axis tick labels, 1-2-5 steps.
const PREFIXES = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k'], [1, ''], [1e-3, 'm'], [1e-6, 'µ'], [1e-9, 'n'], [1e-12, 'p']];

function prefixFor(magnitude) {
  for (const [scale, p] of PREFIXES) if (magnitude >= scale * 0.9995) return [scale, p];
  return PREFIXES[PREFIXES.length - 1];
}

// Units that take an SI prefix; any other ('keV', 'mV', 'counts') is shown with plain numbers.
const PREFIXABLE = new Set(['', 's', 'Hz', 'V', 'A', 'W', 'Pa', 'm', 'g', 'N', 'J', 'T', 'C', 'F', 'K', 'eV', 'Ω', 'S', 'B']);
const plainScale = (unit) => !PREFIXABLE.has(unit);

/** `value` with an SI prefix and `digits` significant digits: si(0.0025, 's') = '2.500 ms'. */
export function si(value, unit, digits = 4) {
  if (value === null || value === undefined || !isFinite(value)) return '—';
  if (value === 0) return '0 ' + unit;
  if (plainScale(unit)) return String(+value.toPrecision(digits)) + ' ' + unit;
  const [scale, p] = prefixFor(Math.abs(value));
  return ((value / scale).toPrecision(digits) + ' ' + p + unit).trimEnd();
}

/** Pretty units: V^2/Hz -> V²/Hz. */
export function prettyUnits(units) {
  return String(units || '').replace(/\^2/g, '²').replace(/\^3/g, '³');
}

/** An uPlot `values` function: tick labels with one SI prefix for the whole axis and as many decimals
 *  as the tick increment needs, e.g. '−2.5 ms'. Null splits (a log axis's unlabelled minor lines) stay blank. */
export function tickLabels(unit) {
  return (u, splits, axisIdx, space, incr) => {
    const finite = splits.filter((s) => s !== null && isFinite(s));
    if (!finite.length) return splits.map(() => '');
    const [scale, p] = plainScale(unit) ? [1, ''] : prefixFor(Math.max(...finite.map(Math.abs)) || 1);
    const step = incr && isFinite(incr) && incr > 0 ? incr / scale : 0;
    const decimals = step > 0 ? Math.min(6, Math.max(0, Math.ceil(-Math.log10(step) - 1e-9))) : 3;
    return splits.map((s) => {
      if (s === null || !isFinite(s)) return '';
      const text = decimals > 0 && step > 0 ? (s / scale).toFixed(decimals) : String(+(s / scale).toPrecision(4));
      return (text.replace(/^-/, '−') + ' ' + p + unit).trimEnd();
    });
  };
}

/** Log-axis labels: each value with its own prefix ('20 Hz', '1 kHz'); blanks where uPlot filters. */
export function logTickLabels(unit) {
  return (u, splits) => splits.map((s) => (s === null || !isFinite(s) ? '' : si(s, unit, 3).replace(/\.0+ /, ' ').replace(/(\.\d*?)0+ /, '$1 ')));
}

/** The smallest 1-2-5 x 10^n at least `x`. */
export function nice125(x) {
  if (!(x > 0) || !isFinite(x)) return 1;
  const decade = Math.pow(10, Math.floor(Math.log10(x)));
  for (const m of [1, 2, 5, 10]) if (m * decade >= x * (1 - 1e-9)) return m * decade;
  return 10 * decade;
}

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

export function td(text, cls) {
  return el('td', cls ? { class: cls } : {}, String(text));
}

/** A labelled readout value: the text for people, data-value (a plain number) for scripts. */
export function reading(cls, label) {
  const value = el('span', { class: 'value' });
  const node = el('span', { class: 'reading ' + cls }, label + ' ', value);
  return {
    node,
    set(number, text) {
      value.textContent = text;
      value.dataset.value = number === null || !isFinite(number) ? '' : String(number);
    },
  };
}
