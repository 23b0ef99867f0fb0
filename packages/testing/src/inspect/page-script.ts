/**
 * The inspector page's script. Every value from a delivery reaches the page through `textContent` (never
 * `innerHTML`), with control, bidi and zero-width characters shown as escapes; the list renders one page of rows
 * at a time, newest first, so a capture of any size stays responsive.
 */
export const INSPECTOR_SCRIPT = `(() => {
  const token = new URLSearchParams(location.search).get('token');
  const settings = JSON.parse(document.body.dataset.settings);
  const PAGE = 100;
  const state = { all: [], filtered: [], page: 0, selected: undefined, checked: new Set(), original: '', replays: new Map() };
  const $ = (id) => document.getElementById(id);
  // C0 and C1 controls, line separators, bidi controls and zero-width marks: shown as \\uXXXX, so a value reads as
  // it is (an order id with U+202E cannot show its end reversed).
  const HIDDEN = /[\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2069\\ufeff]/g;
  // The same in JSON text, its own line breaks kept (JSON.stringify escapes C0 inside strings, not the others).
  const HIDDEN_IN_JSON = /[\\u007f-\\u009f\\u061c\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2069\\ufeff]/g;
  const escape = (c) => '\\\\u' + c.charCodeAt(0).toString(16).padStart(4, '0');
  const visible = (text) => String(text).replace(HIDDEN, escape);
  const visibleJson = (text) => String(text).replace(HIDDEN_IN_JSON, escape);
  const clip = (text, n) => (text.length > n ? text.slice(0, n) + '…' : text);
  const el = (tag, attributes, ...children) => {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    for (const child of children) node.append(child instanceof Node ? child : visible(child));
    return node;
  };
  const pre = (text, id) => {
    const node = el('pre', id ? { id } : {});
    node.textContent = visibleJson(text);
    return node;
  };
  const shortTime = (at) => String(at).replace('T', ' ').replace(/\\.\\d+Z$|Z$/, '');
  // The list's time: month, day and time of day (the year and the milliseconds are in the row's title).
  const listTime = (at) => shortTime(at).replace(/^\\d{4}-/, '');
  const long = (text, n) => (text.length > n ? text.slice(0, n) + '… (' + text.length + ' characters)' : text);
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
  const classOf = (d) => (d.status >= 400 || d.error || d.refused ? 'refused' : d.outcome === 'duplicate' ? 'duplicate' : '');
  const headerTable = (headers) => el('table', { class: 'headers' }, el('tbody', {},
    ...Object.entries(headers).map(([name, value]) => el('tr', {}, el('th', {}, name), el('td', {}, String(value))))));

  function addOptions(select, values) {
    const known = new Set([...select.options].map((o) => o.value));
    for (const value of [...values].sort()) if (!known.has(value)) select.append(el('option', { value }, clip(value, 60)));
  }
  function applyFilters(keepPage) {
    const event = $('filter-event').value;
    const outcome = $('filter-outcome').value;
    const search = $('filter-order').value.trim();
    // Newest first: the list is kept in arrival order and shown from its end.
    state.filtered = state.all.filter((d) =>
      (!event || d.event === event) &&
      (!outcome || (d.outcome || (d.error ? 'no answer' : '')) === outcome) &&
      (!search || [d.order, d.payment, d.operation].some((id) => (id || '').includes(search)))).reverse();
    const pages = Math.max(1, Math.ceil(state.filtered.length / PAGE));
    if (!keepPage) state.page = 0;
    state.page = Math.min(state.page, pages - 1);
    renderRows();
  }
  const rowOf = (node) => (node && node.closest ? node.closest('#rows tr') : null);
  function renderRows() {
    const focused = rowOf(document.activeElement);
    const shown = state.filtered.slice(state.page * PAGE, (state.page + 1) * PAGE);
    const rows = shown.map((d, index) => {
      const box = el('input', { type: 'checkbox', 'aria-label': 'select delivery ' + d.id, tabindex: '-1' });
      box.checked = state.checked.has(d.id);
      box.addEventListener('click', (event) => {
        event.stopPropagation();
        if (box.checked) state.checked.add(d.id); else state.checked.delete(d.id);
      });
      const current = state.selected === undefined ? index === 0 : d.id === state.selected;
      const row = el('tr', { 'data-id': String(d.id), class: classOf(d), tabindex: current ? '0' : '-1', 'aria-selected': String(d.id === state.selected) },
        el('td', { class: 'pick' }, box), el('td', { class: 'num' }, String(d.id)), el('td', { class: 'time', title: visible(clip(d.at, 60)) }, listTime(d.at)),
        el('td', { class: 'event', title: visible(clip(d.event, 200)) }, clip(d.event, 40)), el('td', { class: 'order', title: visible(clip(d.order || '', 200)) }, clip(d.order || '', 40)),
        el('td', { class: 'amount' }, clip(d.amount || '', 24)), el('td', { class: 'answer', title: visible(answerOf(d)) }, clip(answerOf(d), 60)),
        el('td', { class: 'ms' }, d.durationMs === undefined ? '' : String(d.durationMs)));
      if (d.id === state.selected) row.classList.add('selected');
      row.addEventListener('click', () => select(d.id));
      return row;
    });
    $('rows').replaceChildren(...rows);
    if (focused) {
      const again = $('rows').querySelector('tr[data-id="' + focused.dataset.id + '"]');
      if (again) again.focus();
    }
    const pages = Math.max(1, Math.ceil(state.filtered.length / PAGE));
    $('page-info').textContent = 'Page ' + (state.page + 1) + ' of ' + pages + ' · ' + state.filtered.length + ' of ' + state.all.length + ' deliveries';
  }
  function markSelected() {
    for (const row of $('rows').children) {
      const chosen = Number(row.dataset.id) === state.selected;
      row.classList.toggle('selected', chosen);
      row.setAttribute('aria-selected', String(chosen));
      row.tabIndex = chosen ? 0 : -1;
    }
  }
  function definition(term, value) {
    return value === undefined || value === '' ? [] : [el('dt', {}, term), el('dd', {}, long(String(value), 240))];
  }
  function requestPart(d) {
    const part = [el('h3', {}, 'Request')];
    if (d.source === 'fake') {
      part.push(el('p', {}, 'POST ' + (d.url || '?') + (d.attempt ? ' · attempt ' + d.attempt : '')),
        headerTable({ 'content-type': 'application/x-www-form-urlencoded' }),
        el('p', { class: 'message' }, 'Body: data (the notification below, decoded and masked) and signature.'));
    } else {
      part.push(el('p', {}, 'POST to your endpoint' + (d.line ? ' · capture line ' + d.line : '')),
        headerTable({ 'content-type': d.contentType || '(not captured)' }),
        el('p', { class: 'message' }, 'A capture keeps the media type only: no other header, no signature. Body: data, decoded and masked:'));
    }
    part.push(d.notification ? pre(JSON.stringify(d.notification, null, 2), 'notification')
      : el('p', { class: 'message' }, 'No notification kept: refused before its signature was verified.'));
    return part;
  }
  function answerPart(d) {
    const part = [el('h3', {}, 'Answer'), el('dl', {}, ...definition('Status', answerOf(d)), ...definition('Error', d.code ? d.code + (d.message ? ': ' + d.message : '') : d.error),
      ...definition('Diagnosis', d.hint), ...definition('Duration', d.durationMs === undefined ? '' : d.durationMs + ' ms'))];
    if (d.answerHeaders) part.push(headerTable(d.answerHeaders));
    if (d.answer !== undefined) part.push(pre(d.answer || '(empty body)', 'answer-body'));
    else if (d.source === 'capture') part.push(el('p', { class: 'message' }, d.answerHeaders ? 'A capture keeps the status, outcome, code and headers of the answer, not its body.'
      : 'A capture keeps the status, outcome and code of the answer, not its body; its headers since format 3.'));
    return part;
  }
  function paymentPart(d, payment) {
    if (payment.length === 0) return [];
    return [el('h3', {}, 'This payment (' + payment.length + ' deliver' + (payment.length === 1 ? 'y' : 'ies') + ')'),
      el('table', { class: 'group' }, el('tbody', {}, ...payment.map((p) => {
        const open = el('button', { type: 'button' }, '#' + p.id + ' ' + clip(p.event, 60) + (p.operation ? ' · ' + clip(p.operation, 60) : ''));
        open.addEventListener('click', () => select(p.id, true));
        return el('tr', { class: (p.id === d.id ? 'current ' : '') + classOf(p) }, el('td', {}, open), el('td', {}, shortTime(p.at)),
          el('td', {}, p.amount || ''), el('td', {}, answerOf(p)));
      })))];
  }
  // The payment's ledger (--ledger): its state and amounts, every transition with the delivery that caused it, and
  // every delivery it recorded with its verdict.
  function ledgerPart(ledger) {
    if (!ledger) return [];
    const title = el('h3', {}, 'Ledger');
    if (ledger.error) return [title, el('p', { class: 'message error', id: 'ledger' }, 'The ledger could not be read: ' + ledger.error)];
    if (ledger.missing) return [title, el('p', { class: 'message', id: 'ledger' }, 'The ledger holds nothing for this order.')];
    const e = ledger.entry;
    const money = (n) => (typeof n === 'number' ? n + (e.currency ? ' ' + e.currency : '') : '');
    const each = (record) => Object.entries(record || {}).map(([id, n]) => id + ': ' + money(n)).join(', ');
    const time = (at) => (Number.isFinite(at) ? shortTime(new Date(at).toISOString()) : '');
    const cause = (c) => clip(c.method + '.' + c.status, 80) + (c.operationId ? ' · ' + clip(c.operationId, 80) : '') + (c.chargeId ? ' · charge ' + clip(c.chargeId, 80) : '');
    const facts = el('dl', { id: 'ledger' }, ...definition('State', e.state), ...definition('Version', String(e.version)),
      ...definition('Paid', money(e.paidAmount)), ...definition('Authorized', money(e.authorizedAmount)),
      ...definition('Captured', e.capturedAmount ? money(e.capturedAmount) : ''), ...definition('Refunded', e.refundedAmount ? money(e.refundedAmount) : ''),
      ...definition('Refunds', each(e.refunds)), ...definition('Charges', Object.entries(e.charges || {}).map(([id, c]) => id + ': ' + c.state).join(', ')),
      ...definition('Subscription', e.subscription ? (e.subscription.id ? e.subscription.id + ': ' : '') + e.subscription.status : ''),
      ...definition('Unknown statuses', (e.unknownStatuses || []).join(', ')),
      ...definition('Conflicts', (e.conflicts || []).map((c) => c.reason + ' (' + cause(c.cause) + ')').join(', ')));
    const history = el('table', { class: 'group', id: 'ledger-history' }, el('thead', {}, el('tr', {}, el('th', {}, 'Step'), el('th', {}, 'Caused by'), el('th', {}, 'Time'))),
      el('tbody', {}, ...(e.history || []).map((t) => el('tr', {}, el('td', {}, 'v' + t.version + ' ' + (t.subject === 'payment' ? '' : t.subject + ' ') + t.from + ' → ' + t.to
        + (t.refund ? ' (refund ' + clip(t.refund.operationId, 80) + ': ' + money(t.refund.amount) + ')' : '') + (t.implied ? ' (implied)' : '')),
      el('td', {}, cause(t.cause)), el('td', {}, time(t.cause.at))))));
    const recorded = el('table', { class: 'group', id: 'ledger-deliveries' }, el('thead', {}, el('tr', {}, el('th', {}, 'Delivery recorded'), el('th', {}, 'Verdict'), el('th', {}, 'Time'))),
      el('tbody', {}, ...(e.deliveries || []).map((c) => el('tr', { class: c.verdict === 'conflict' ? 'refused' : c.verdict === 'stale' ? 'duplicate' : '' },
        el('td', {}, cause(c)), el('td', {}, c.verdict), el('td', {}, time(c.at))))));
    return [el('h3', {}, 'Ledger: ' + e.state), facts, el('h4', {}, 'History (' + (e.history || []).length + ')'), history,
      el('h4', {}, 'Deliveries recorded (' + (e.deliveries || []).length + ')'), recorded];
  }
  function replaysPart(id) {
    const made = state.replays.get(id) || [];
    const part = el('div', { id: 'replays-of' });
    if (made.length > 0) part.append(el('h3', {}, 'Replays from this page (' + made.length + ')'), ...made.map((a) => attemptDetails(a)));
    return part;
  }
  function attemptDetails(a) {
    const summary = el('summary', {}, a.refused ? 'not sent: ' + a.refused : a.error ? 'no answer: ' + a.error : '→ ' + answerOf(a));
    const parts = [summary];
    if (a.request) {
      parts.push(el('h4', {}, 'Request: ' + a.request.method + ' ' + a.request.url), headerTable(a.request.headers), pre(a.request.body));
    }
    if (a.status !== undefined) parts.push(el('h4', {}, 'Answer: ' + a.status), headerTable(a.headers || {}), pre(a.body || '(empty body)'));
    return el('details', {}, ...parts);
  }
  async function select(id, focus) {
    state.selected = id;
    markSelected();
    if (focus) {
      const row = $('rows').querySelector('tr[data-id="' + id + '"]');
      if (row) row.focus();
    }
    const { delivery: d, related, payment, ledger } = await api('/delivery?id=' + id);
    if (state.selected !== id) return;
    const curl = el('button', { id: 'copy-curl', type: 'button' }, 'Copy as cURL');
    curl.disabled = !settings.canReplay || !d.notification;
    const shownCurl = el('pre', { id: 'curl', hidden: '' });
    const detail = [el('h2', {}, 'Delivery #' + d.id), el('div', { class: 'actions' }, curl), shownCurl,
      el('dl', {}, ...definition('Source', d.source + (d.line ? ', line ' + d.line : '')), ...definition('Time', d.at),
        ...definition('Event', d.event), ...definition('Order', d.order), ...definition('Payment', d.payment), ...definition('Operation', d.operation),
        ...definition('Answer', answerOf(d)), ...definition('Key', d.key))];
    state.original = d.notification ? visibleJson(JSON.stringify(d.notification, null, 2)) : '';
    detail.push(...requestPart(d), ...answerPart(d), ...paymentPart(d, payment), ...ledgerPart(ledger), replaysPart(d.id));
    detail.push(el('h3', {}, 'Other deliveries of this notification (' + related.length + ')'));
    for (const other of related) {
      detail.push(el('h4', {}, '#' + other.id + ' at ' + clip(other.at, 40) + ', answered ' + clip(answerOf(other), 80)));
      detail.push(other.changes.length === 0 ? el('p', { class: 'message' }, 'Same fields and values.')
        : el('table', { class: 'diff' }, el('thead', {}, el('tr', {}, el('th', {}, 'Field'), el('th', {}, 'This delivery'), el('th', {}, '#' + other.id))),
          el('tbody', {}, ...other.changes.map((c) => el('tr', {}, el('td', {}, c.path), el('td', {}, c.before === undefined ? '(absent)' : clip(c.before, 200)), el('td', {}, c.after === undefined ? '(absent)' : clip(c.after, 200)))))));
    }
    if (d.notification) {
      const editor = el('textarea', { id: 'edit', spellcheck: 'false', 'aria-label': 'notification to send' });
      editor.value = state.original;
      const replay = el('button', { id: 'replay', type: 'button' }, 'Replay');
      replay.addEventListener('click', () => replayDeliveries([d.id], editor.value));
      const name = el('input', { id: 'fixture-name', placeholder: 'fixture name', value: 'delivery-' + d.id, 'aria-label': 'fixture name' });
      const save = el('button', { id: 'save', type: 'button' }, 'Save as fixture');
      save.addEventListener('click', () => saveFixture(d.id, name.value, editor.value));
      curl.addEventListener('click', () => copyCurl(d.id, editor.value, shownCurl));
      replay.disabled = !settings.canReplay;
      save.disabled = !settings.canSave;
      detail.push(el('h3', {}, 'Edit, replay, save'), editor, el('div', { class: 'actions' }, replay, name, save));
    }
    $('detail').replaceChildren(...detail);
  }
  function edited(text) {
    if (text === undefined || text === state.original) return undefined;
    return JSON.parse(text);
  }
  function say(text, isError) {
    $('action-message').className = isError ? 'message error' : 'message';
    $('action-message').textContent = visible(text);
  }
  async function copyCurl(id, text, shown) {
    try {
      const { command } = await api('/curl', { id, url: $('target').value, notification: edited(text) });
      shown.textContent = visible(command);
      shown.hidden = false;
      try {
        await navigator.clipboard.writeText(command);
        say('Copied as cURL: it posts delivery #' + id + ' to ' + $('target').value + ', signed with the test secret.');
      } catch {
        say('The cURL command is shown under the delivery: copy it from there.');
      }
    } catch (error) {
      say('No cURL command: ' + error.message, true);
    }
  }
  async function replayDeliveries(ids, text) {
    try {
      const notification = edited(text);
      const { answers } = await api('/replay', { ids, url: $('target').value, notification });
      for (const a of answers) state.replays.set(a.id, [...(state.replays.get(a.id) || []), a]);
      $('answers').replaceChildren(...answers.map((a) => {
        const d = state.all[a.id];
        return el('tr', { 'data-id': String(a.id), class: classOf(a) }, el('td', {}, String(a.id)), el('td', {}, answerOf(d)),
          el('td', {}, a.refused ? 'not sent: ' + a.refused : a.error ? 'no answer: ' + a.error : answerOf(a)), el('td', {}, clip(a.body || '', 120)));
      }));
      const sent = answers.filter((a) => !a.refused).length;
      say('Replayed ' + sent + ' deliver' + (sent === 1 ? 'y' : 'ies') + ' to ' + $('target').value + (sent < answers.length ? '; ' + (answers.length - sent) + ' not sent' : '') + '.');
      if (ids.includes(state.selected) && $('replays-of')) $('replays-of').replaceWith(replaysPart(state.selected));
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
      $('problems').textContent = visible(update.errors.join(' · '));
      $('status').textContent = state.all.length + ' deliveries, newest first';
      document.body.dataset.loaded = String(state.all.length);
    } catch (error) {
      $('problems').textContent = visible('Cannot reach the inspector: ' + error.message);
    }
    setTimeout(poll, 1000);
  }
  // The keyboard: / to the search, Esc back to the list, arrows or j/k to move (each row opens as it is reached),
  // Enter to open the focused row, x to choose it for 'Replay selected'.
  function move(step) {
    const rows = [...$('rows').children];
    if (rows.length === 0) return;
    const at = rows.findIndex((row) => Number(row.dataset.id) === state.selected);
    const from = rows.indexOf(rowOf(document.activeElement));
    const index = Math.min(rows.length - 1, Math.max(0, (from >= 0 ? from : at) + step));
    select(Number(rows[index].dataset.id), true);
  }
  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    const typing = target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement;
    if (typing) {
      if (event.key === 'Escape' && target.id === 'filter-order') {
        event.preventDefault();
        const first = $('rows').firstElementChild;
        if (first) first.focus();
      }
      return;
    }
    const row = rowOf(target);
    if (event.key === '/') {
      event.preventDefault();
      $('filter-order').focus();
      $('filter-order').select();
    } else if (event.key === 'ArrowDown' || event.key === 'j') {
      event.preventDefault();
      move(rowOf(document.activeElement) || state.selected !== undefined ? 1 : 0);
    } else if (event.key === 'ArrowUp' || event.key === 'k') {
      event.preventDefault();
      move(-1);
    } else if (event.key === 'x' && row) {
      event.preventDefault();
      const box = row.querySelector('input[type=checkbox]');
      box.click();
    } else if ((event.key === 'Enter' || event.key === ' ') && row) {
      event.preventDefault();
      select(Number(row.dataset.id), true);
    } else if (event.key === 'Escape') {
      const back = $('rows').querySelector('tr[tabindex="0"]') || $('rows').firstElementChild;
      if (back) back.focus();
    }
  });
  $('target').value = settings.target;
  if (settings.scenario) {
    $('scenario-link').href = '/scenario?token=' + encodeURIComponent(token);
    $('scenario-link').hidden = false;
  }
  for (const id of ['filter-event', 'filter-outcome']) $(id).addEventListener('change', () => applyFilters(false));
  $('filter-order').addEventListener('input', () => applyFilters(false));
  $('prev').addEventListener('click', () => { state.page = Math.max(0, state.page - 1); renderRows(); });
  $('next').addEventListener('click', () => { state.page = Math.min(Math.ceil(state.filtered.length / PAGE) - 1, state.page + 1); renderRows(); });
  $('replay-selected').addEventListener('click', () => replayDeliveries([...state.checked].sort((a, b) => a - b)));
  $('replay-selected').disabled = !settings.canReplay;
  poll();
})();
`;
