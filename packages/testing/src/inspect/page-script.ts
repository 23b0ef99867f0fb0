/**
 * The inspector page's script. Every value from a delivery reaches the page through `textContent` (never
 * `innerHTML`), with control characters shown as escapes; the list renders one page of rows at a time, so a
 * capture of any size stays responsive.
 */
export const INSPECTOR_SCRIPT = `(() => {
  const token = new URLSearchParams(location.search).get('token');
  const settings = JSON.parse(document.body.dataset.settings);
  const PAGE = 100;
  const state = { all: [], filtered: [], page: 0, selected: undefined, checked: new Set(), original: '' };
  const $ = (id) => document.getElementById(id);
  const visible = (text) =>
    String(text).replace(/[\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]/g, (c) => '\\\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  const clip = (text, n) => (text.length > n ? text.slice(0, n) + '…' : text);
  const el = (tag, attributes, ...children) => {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    for (const child of children) node.append(child instanceof Node ? child : visible(child));
    return node;
  };
  // JSON.stringify escapes every control character inside a string: the only ones left are its own line breaks.
  const pre = (json) => {
    const node = el('pre', { id: 'notification' });
    node.textContent = json;
    return node;
  };
  const shortTime = (at) => String(at).replace('T', ' ').replace(/\\.\\d+Z$|Z$/, '');
  const api = async (path, body) => {
    const init = body === undefined
      ? { headers: { 'x-payhook-token': token } }
      : { method: 'POST', headers: { 'x-payhook-token': token, 'content-type': 'application/json' }, body: JSON.stringify(body) };
    const response = await fetch(path, init);
    const json = await response.json();
    if (!response.ok) throw new Error(json.error || String(response.status));
    return json;
  };
  const answerOf = (d) =>
    d.status === undefined ? (d.error ? 'no answer' : '?') : d.status + ' ' + (d.outcome || '') + (d.code ? ' ' + d.code : '');
  const classOf = (d) => (d.status >= 400 || d.error ? 'refused' : d.outcome === 'duplicate' ? 'duplicate' : '');

  function addOptions(select, values) {
    const known = new Set([...select.options].map((o) => o.value));
    for (const value of [...values].sort()) if (!known.has(value)) select.append(el('option', { value }, value));
  }
  function applyFilters(keepPage) {
    const event = $('filter-event').value;
    const outcome = $('filter-outcome').value;
    const order = $('filter-order').value.trim();
    state.filtered = state.all.filter((d) =>
      (!event || d.event === event) &&
      (!outcome || (d.outcome || (d.error ? 'no answer' : '')) === outcome) &&
      (!order || (d.order || '').includes(order)));
    const pages = Math.max(1, Math.ceil(state.filtered.length / PAGE));
    if (!keepPage) state.page = 0;
    state.page = Math.min(state.page, pages - 1);
    renderRows();
  }
  function renderRows() {
    const rows = state.filtered.slice(state.page * PAGE, (state.page + 1) * PAGE).map((d) => {
      const box = el('input', { type: 'checkbox', 'aria-label': 'select delivery ' + d.id });
      box.checked = state.checked.has(d.id);
      box.addEventListener('click', (event) => {
        event.stopPropagation();
        if (box.checked) state.checked.add(d.id); else state.checked.delete(d.id);
      });
      const row = el('tr', { 'data-id': String(d.id), class: classOf(d) },
        el('td', {}, box), el('td', {}, String(d.id)), el('td', { title: d.at }, shortTime(d.at)),
        el('td', {}, clip(d.event, 40)), el('td', {}, clip(d.order || '', 40)), el('td', {}, clip(d.amount || '', 24)),
        el('td', {}, clip(answerOf(d), 30)), el('td', {}, d.durationMs === undefined ? '' : String(d.durationMs)));
      if (d.id === state.selected) row.classList.add('selected');
      row.addEventListener('click', () => select(d.id));
      return row;
    });
    $('rows').replaceChildren(...rows);
    const pages = Math.max(1, Math.ceil(state.filtered.length / PAGE));
    $('page-info').textContent = 'Page ' + (state.page + 1) + ' of ' + pages + ' · ' + state.filtered.length + ' of ' + state.all.length + ' deliveries';
  }
  function definition(term, value) {
    return value === undefined || value === '' ? [] : [el('dt', {}, term), el('dd', {}, String(value))];
  }
  async function select(id) {
    state.selected = id;
    renderRows();
    const { delivery: d, related } = await api('/delivery?id=' + id);
    const detail = [el('h2', {}, 'Delivery #' + d.id),
      el('dl', {}, ...definition('Source', d.source + (d.line ? ', line ' + d.line : '')), ...definition('Time', d.at),
        ...definition('Event', d.event), ...definition('Order', d.order), ...definition('Answer', answerOf(d)),
        ...definition('Diagnosis', d.hint), ...definition('Error', d.error), ...definition('Duration', d.durationMs === undefined ? '' : d.durationMs + ' ms'),
        ...definition('Key', d.key), ...definition('Media type', d.contentType))];
    state.original = d.notification ? JSON.stringify(d.notification, null, 2) : '';
    detail.push(el('h3', {}, 'Notification'),
      d.notification ? pre(state.original) : el('p', { class: 'message' }, 'None kept: refused before its signature was verified.'));
    detail.push(el('h3', {}, 'Other deliveries of this notification (' + related.length + ')'));
    for (const other of related) {
      detail.push(el('h4', {}, '#' + other.id + ' at ' + other.at + ', answered ' + answerOf(other)));
      detail.push(other.changes.length === 0 ? el('p', { class: 'message' }, 'Same fields and values.')
        : el('table', { class: 'diff' }, el('thead', {}, el('tr', {}, el('th', {}, 'Field'), el('th', {}, 'This delivery'), el('th', {}, '#' + other.id))),
          el('tbody', {}, ...other.changes.map((c) => el('tr', {}, el('td', {}, c.path), el('td', {}, c.before === undefined ? '(absent)' : clip(c.before, 200)), el('td', {}, c.after === undefined ? '(absent)' : clip(c.after, 200)))))));
    }
    if (d.notification) {
      const editor = el('textarea', { id: 'edit', spellcheck: 'false', 'aria-label': 'notification to send' });
      editor.value = state.original;
      const replay = el('button', { id: 'replay', type: 'button' }, 'Replay');
      replay.addEventListener('click', () => replayDeliveries([d.id], editor.value));
      const name = el('input', { id: 'fixture-name', placeholder: 'fixture name', value: 'delivery-' + d.id });
      const save = el('button', { id: 'save', type: 'button' }, 'Save as fixture');
      save.addEventListener('click', () => saveFixture(d.id, name.value, editor.value));
      replay.disabled = !settings.canReplay;
      save.disabled = !settings.canSave;
      detail.push(el('h3', {}, 'Edit, replay, save'), editor, el('div', { class: 'actions' }, replay, name, save));
    }
    $('detail').replaceChildren(...detail);
  }
  function edited(text) {
    if (text === state.original) return undefined;
    return JSON.parse(text);
  }
  function say(text, isError) {
    $('action-message').className = isError ? 'message error' : 'message';
    $('action-message').textContent = visible(text);
  }
  async function replayDeliveries(ids, text) {
    try {
      const notification = text === undefined ? undefined : edited(text);
      const { answers } = await api('/replay', { ids, url: $('target').value, notification });
      $('answers').replaceChildren(...answers.map((a) => {
        const d = state.all[a.id];
        return el('tr', { 'data-id': String(a.id), class: classOf(a) }, el('td', {}, String(a.id)), el('td', {}, answerOf(d)),
          el('td', {}, a.error ? 'no answer: ' + a.error : answerOf(a)), el('td', {}, clip(a.body || '', 120)));
      }));
      say('Replayed ' + answers.length + ' deliver' + (answers.length === 1 ? 'y' : 'ies') + ' to ' + $('target').value + '.');
    } catch (error) {
      say('Not replayed: ' + error.message, true);
    }
  }
  async function saveFixture(id, name, text) {
    try {
      const saved = await api('/fixture', { id, name, notification: edited(text) });
      say('Saved in ' + saved.folder + ': ' + saved.files.join(', '));
    } catch (error) {
      say('Not saved: ' + error.message, true);
    }
  }
  async function poll() {
    try {
      const update = await api('/deliveries?since=' + state.all.length);
      if (update.deliveries.length > 0) {
        state.all.push(...update.deliveries);
        addOptions($('filter-event'), new Set(update.deliveries.map((d) => d.event)));
        addOptions($('filter-outcome'), new Set(update.deliveries.map((d) => d.outcome || (d.error ? 'no answer' : '')).filter(Boolean)));
        applyFilters(true);
      }
      const problems = update.unreadable.map((u) => 'line ' + u.line + ': ' + u.reason);
      $('unreadable').textContent = visible(update.unreadableCount ? update.unreadableCount + ' unreadable line(s): ' + problems.slice(0, 5).join('; ') : '');
      $('status').textContent = visible(state.all.length + ' deliveries' + (update.errors.length ? ' · ' + update.errors.join('; ') : ''));
      document.body.dataset.loaded = String(state.all.length);
    } catch (error) {
      $('status').textContent = 'Cannot reach the inspector: ' + error.message;
    }
    setTimeout(poll, 1000);
  }
  $('target').value = settings.target;
  for (const id of ['filter-event', 'filter-outcome']) $(id).addEventListener('change', () => applyFilters(false));
  $('filter-order').addEventListener('input', () => applyFilters(false));
  $('prev').addEventListener('click', () => { state.page = Math.max(0, state.page - 1); renderRows(); });
  $('next').addEventListener('click', () => { state.page = Math.min(Math.ceil(state.filtered.length / PAGE) - 1, state.page + 1); renderRows(); });
  $('replay-selected').addEventListener('click', () => replayDeliveries([...state.checked].sort((a, b) => a - b)));
  $('replay-selected').disabled = !settings.canReplay;
  poll();
})();
`;
