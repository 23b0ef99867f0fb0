import { escapeHtml } from '../pages/layout.js';
import { INSPECTOR_SCRIPT } from './page-script.js';

const STYLES = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #f6f6f8; }
header { padding: 8px 16px; background: #1d1d1f; color: #fff; display: flex; gap: 16px; align-items: baseline; }
header h1 { font-size: 16px; margin: 0; }
#status { font-size: 12px; opacity: .8; }
main { display: grid; grid-template-columns: minmax(560px, 1.25fr) minmax(400px, 1fr); gap: 12px; padding: 12px; }
section { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 10px; min-width: 0; overflow-x: auto; }
.filters { display: flex; gap: 8px; flex-wrap: wrap; margin-bottom: 8px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
table { table-layout: auto; }
th, td { text-align: left; padding: 3px 5px; border-bottom: 1px solid #eee; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 180px; }
.diff td { white-space: normal; word-break: break-all; max-width: none; }
tbody tr { cursor: pointer; }
tbody tr:hover { background: #f0f4ff; }
tr.selected { background: #dde7ff; }
.refused { color: #b00020; }
.duplicate { color: #8a6d00; }
pre { background: #f6f6f8; padding: 8px; overflow: auto; max-height: 280px; white-space: pre-wrap; word-break: break-all; }
textarea { width: 100%; min-height: 180px; font: 12px ui-monospace, monospace; box-sizing: border-box; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0 0 8px; }
dt { color: #666; }
dd { margin: 0; word-break: break-all; }
.pager, .actions { display: flex; gap: 8px; align-items: center; margin: 8px 0; flex-wrap: wrap; }
.message { font-size: 12px; color: #444; }
.error { color: #b00020; }
#replays { margin: 0 12px 12px; }
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
<header><h1>payhook inspect</h1><span id="status">Reading deliveries…</span></header>
<main>
<section aria-label="Deliveries">
<div class="filters">
<label>Event <select id="filter-event"><option value="">any</option></select></label>
<label>Outcome <select id="filter-outcome"><option value="">any</option></select></label>
<label>Order <input id="filter-order" type="search" placeholder="order id contains…"></label>
</div>
<table><thead><tr><th></th><th>#</th><th>Time</th><th>Event</th><th>Order</th><th>Amount</th><th>Answer</th><th>ms</th></tr></thead>
<tbody id="rows"></tbody></table>
<div class="pager"><button id="prev" type="button">Previous</button><span id="page-info"></span><button id="next" type="button">Next</button>
<button id="replay-selected" type="button">Replay selected</button></div>
<div id="unreadable" class="message"></div>
</section>
<section aria-label="Delivery" id="detail"><p class="message">Choose a delivery to see its notification, its answer and its other deliveries.</p></section>
</main>
<section aria-label="Replay and save" id="replays">
<div class="actions"><label>Replay to <input id="target" type="url" size="48"></label></div>
<table><thead><tr><th>#</th><th>Answered then</th><th>Answered now</th><th>Body</th></tr></thead><tbody id="answers"></tbody></table>
<p id="action-message" class="message"></p>
</section>
<script nonce="${escapeHtml(nonce)}">${INSPECTOR_SCRIPT}</script>
</body>
</html>
`;
}
