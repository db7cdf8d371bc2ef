// The run bar: the arena's run (number, state, time running) from GET /api/run, and Start and Stop
// buttons that POST /api/run/start and /api/run/stop with the page's token cookie. The buttons are
// disabled unless the server allows control (/api/server's allow_control) and the run state permits.

/** Seconds as m:ss or h:mm:ss. */
function clock(seconds) {
  const s = Math.max(0, Math.floor(seconds || 0));
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

export function createRunBar(node) {
  const state = node.querySelector('#run-state'), title = node.querySelector('#run-title');
  const start = node.querySelector('#run-start'), stop = node.querySelector('#run-stop');
  const message = node.querySelector('#run-message');
  const run = { status: null, allowControl: false, busy: false };

  function draw() {
    const s = run.status;
    let text = 'run: ?';
    if (s && s.state === 'running') text = `run ${s.run} · running · ${clock(s.elapsed_s)}`;
    else if (s && s.run) text = `run ${s.run} · idle (${s.ended})`;
    else if (s) text = 'no run yet · idle';
    state.textContent = text;
    state.className = s && s.state === 'running' ? 'running' : '';
    state.title = s && s.title ? s.title : '';
    const why = !run.allowControl ? 'run control is not allowed (weir serve --allow-control)'
      : s && !s.enabled ? 'controlled runs are not enabled (weir runctl enable ARENA DIR)' : '';
    start.disabled = run.busy || !run.allowControl || !s || !s.enabled || s.state === 'running';
    stop.disabled = run.busy || !run.allowControl || !s || s.state !== 'running';
    title.disabled = !run.allowControl;
    start.title = stop.title = why;
  }

  async function post(verb, body) {
    run.busy = true;
    draw();
    message.textContent = verb === 'start' ? 'starting…' : 'stopping (the recorders close the files)…';
    try {
      const r = await fetch('api/run/' + verb, { method: 'POST', credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      const a = await r.json().catch(() => ({}));
      if (!r.ok) message.textContent = a.error || `${verb}: ${r.status}`;
      else if (verb === 'start') message.textContent = `started run ${a.run}`;
      else message.textContent = `run ${a.run} ${a.ended}: ${a.files} file(s), ${a.blocks_lost} lost` + (a.exact ? '' : ' (NOT exact)');
      message.className = r.ok ? '' : 'bad';
    } catch (e) {
      message.textContent = `${verb}: ${e.message}`;
      message.className = 'bad';
    }
    run.busy = false;
    await refresh();
  }

  async function refresh() {
    try {
      const r = await fetch('api/run', { credentials: 'same-origin' });
      run.status = r.ok ? await r.json() : null;
    } catch (e) {
      run.status = null;
    }
    draw();
  }

  start.onclick = () => post('start', title.value ? { title: title.value } : {});
  stop.onclick = () => post('stop', run.status ? { run: run.status.run } : {});  // only the run shown
  draw();
  return {
    refresh,
    setAllowControl(allowed) { run.allowControl = !!allowed; draw(); },
    info: () => ({ status: run.status, allowControl: run.allowControl, text: state.textContent,
      message: message.textContent, startEnabled: !start.disabled, stopEnabled: !stop.disabled }),
  };
}
