import { escapeHtml } from '../pages/layout.js';
import { INSPECTOR_SCRIPT } from './page-script.js';

// Fixed table layouts, `minmax(0, …)` grid tracks and `overflow-wrap: anywhere`: no value, however long, can make
// a panel wider than the window; one column from 1000 px down, and the least needed columns hidden under 640 px.
const STYLES = `
* { box-sizing: border-box; }
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #f6f6f8; }
header { padding: 8px 16px; background: #1d1d1f; color: #fff; display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: baseline; }
header h1 { font-size: 16px; margin: 0; }
header a { color: #cfe0ff; }
#status { font-size: 12px; opacity: .85; overflow-wrap: anywhere; min-width: 0; }
.keys { font-size: 12px; opacity: .7; }
#problems:not(:empty) { margin: 12px 12px 0; padding: 8px 12px; background: #fde8ea; border: 1px solid #b00020; border-radius: 6px; color: #7a0016; font-weight: 600; overflow-wrap: anywhere; }
main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 12px; padding: 12px; align-items: start; }
@media (max-width: 1000px) { main { grid-template-columns: minmax(0, 1fr); } }
section { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 10px; min-width: 0; overflow-wrap: anywhere; }
h2, h3, h4 { overflow-wrap: anywhere; margin: 12px 0 6px; }
h2 { font-size: 17px; margin-top: 0; }
h3 { font-size: 15px; }
h4 { font-size: 13px; }
.filters { display: flex; gap: 8px; flex-wrap: wrap; margin-bottom: 8px; }
.filters label { display: flex; gap: 4px; align-items: center; min-width: 0; max-width: 100%; }
.filters select { max-width: 14em; min-width: 0; }
#filter-order { width: 18em; max-width: 100%; min-width: 0; }
table { border-collapse: collapse; width: 100%; font-size: 13px; table-layout: fixed; }
th, td { text-align: left; padding: 3px 5px; border-bottom: 1px solid #eee; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
th.pick { width: 28px; } th.num { width: 3.5em; } th.time { width: 8.5em; } th.event { width: 24%; }
th.amount { width: 7em; } th.answer { width: 11em; } th.ms { width: 3.5em; }
.group td:first-child { width: 45%; }
@media (max-width: 640px) { .time, .amount, .ms, .group td:nth-child(2) { display: none; } th.event { width: 30%; } th.answer { width: 8em; } }
#rows tr { cursor: pointer; }
#rows tr:hover { background: #f0f4ff; }
#rows tr:focus { outline: 2px solid #3b6fd8; outline-offset: -2px; }
tr.selected { background: #dde7ff; }
.refused { color: #b00020; }
.duplicate { color: #8a6d00; }
.diff td, .group td, .headers td { white-space: normal; overflow-wrap: anywhere; }
.headers th { width: 12em; }
.group button { font: inherit; background: none; border: 0; padding: 0; color: #1f4fb8; text-decoration: underline; cursor: pointer; text-align: left; overflow-wrap: anywhere; }
.group tr.current { background: #f0f4ff; }
pre { background: #f6f6f8; padding: 8px; overflow: auto; max-height: 320px; white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0 8px; }
textarea { width: 100%; min-height: 180px; font: 12px ui-monospace, monospace; }
dl { display: grid; grid-template-columns: minmax(5em, max-content) minmax(0, 1fr); gap: 2px 12px; margin: 0 0 8px; }
dt { color: #666; }
dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
.pager, .actions { display: flex; gap: 8px; align-items: center; margin: 8px 0; flex-wrap: wrap; }
.actions input { min-width: 0; max-width: 100%; }
#target { width: 32em; }
.message { font-size: 12px; color: #444; }
.error { color: #b00020; }
#replays { margin: 0 12px 12px; }
details { margin: 4px 0; }
summary { cursor: pointer; overflow-wrap: anywhere; }
`;

/**
 * The inspector's page: one HTML document with its style and script inline under the response's nonce, no remote
 * asset. It holds no delivery: the script fetches them with the token and renders every value as text.
 */
export function renderInspectorPage(nonce: string, settings: Record<string, unknown>): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>payhook inspect</title>
<link rel="icon" href="data:,">
<style nonce="${escapeHtml(nonce)}">${STYLES}</style>
</head>
<body data-settings="${escapeHtml(JSON.stringify(settings))}">
<header><h1>payhook inspect</h1><span id="status" role="status">Reading deliveries…</span><a id="scenario-link" hidden>Scenario run</a>
<span class="keys">Keys: / search · ↑ ↓ or j k move · Enter open · x choose for replay · Esc back to the list</span></header>
<div id="problems" role="alert"></div>
<main>
<section aria-label="Deliveries">
<div class="filters">
<label>Search <input id="filter-order" type="search" placeholder="order, payment or operation id" aria-label="search by order, payment or operation id"></label>
<label>Event <select id="filter-event"><option value="">any</option></select></label>
<label>Outcome <select id="filter-outcome"><option value="">any</option></select></label>
</div>
<table><thead><tr><th class="pick"></th><th class="num">#</th><th class="time">Time</th><th class="event">Event</th><th class="order">Order</th><th class="amount">Amount</th><th class="answer">Answer</th><th class="ms">ms</th></tr></thead>
<tbody id="rows"></tbody></table>
<div class="pager"><button id="prev" type="button">Previous</button><span id="page-info"></span><button id="next" type="button">Next</button>
<button id="replay-selected" type="button">Replay selected</button></div>
<div id="unreadable" class="message"></div>
</section>
<section aria-label="Delivery" id="detail"><p class="message">Choose a delivery to see its request, its answer, its payment's other deliveries and its redeliveries.</p></section>
</main>
<section aria-label="Replay and save" id="replays">
<div class="actions"><label for="target">Replay to</label> <input id="target" type="url"> <span class="message">the app given with --target, or loopback</span></div>
<table><thead><tr><th class="num">#</th><th>Answered then</th><th>Answered now</th><th>Body</th></tr></thead><tbody id="answers"></tbody></table>
<p id="action-message" class="message" role="status"></p>
</section>
<script nonce="${escapeHtml(nonce)}">${INSPECTOR_SCRIPT}</script>
</body>
</html>
`;
}
