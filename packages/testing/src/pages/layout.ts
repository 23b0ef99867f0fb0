import { STYLES } from './styles.js';

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * A whole page: the stylesheet inline and an empty icon, so the browser requests nothing beyond the page itself.
 * `content` is HTML already escaped; `script` runs at the end of the body.
 */
export function renderPage(title: string, content: string, script = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<style>${STYLES}</style>
</head>
<body>
<p class="test-mode">Test mode: no real card is charged</p>
<main>
${content}
<footer>Payments by the payhook fake service</footer>
</main>
${script === '' ? '' : `<script>${script}</script>\n`}</body>
</html>
`;
}

/**
 * A short page with a heading and one line, for results and errors.
 *
 * @example
 * renderMessagePage('Payment complete', 'The payment status is success.');
 */
export function renderMessagePage(title: string, message: string): string {
  return renderPage(title, `<h2>${escapeHtml(title)}</h2>\n<p id="message">${escapeHtml(message)}</p>`);
}
