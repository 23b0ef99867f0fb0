/** The pages' only stylesheet, inlined in each page: system fonts, no request leaves the page for it. */
export const STYLES = `
:root { color-scheme: light; --ink: #1a1f36; --muted: #5e6576; --line: #d8dce6; --accent: #3b49df;
  --bad: #c0282d; --soft: #f5f6fa; font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
  Arial, sans-serif; color: var(--ink); }
* { box-sizing: border-box; }
body { margin: 0; background: var(--soft); }
.test-mode { margin: 0; padding: 6px 12px; background: #ffe8a3; color: #5c4400; font-size: 13px;
  text-align: center; letter-spacing: .02em; }
main { max-width: 440px; margin: 32px auto; padding: 28px 28px 20px; background: #fff; border-radius: 12px;
  box-shadow: 0 1px 3px rgba(26, 31, 54, .12), 0 8px 24px rgba(26, 31, 54, .08); }
.merchant { display: flex; align-items: center; gap: 10px; margin: 0 0 18px; font-weight: 600; }
.merchant .logo { display: inline-grid; place-items: center; width: 32px; height: 32px; border-radius: 8px;
  background: var(--accent); color: #fff; font-size: 15px; }
h1 { margin: 0 0 4px; font-size: 30px; font-weight: 650; letter-spacing: -.01em; }
h2 { margin: 0 0 12px; font-size: 20px; }
.order { margin: 0 0 22px; color: var(--muted); }
.order p { margin: 0; }
dl.summary { display: grid; grid-template-columns: auto 1fr; gap: 6px 16px; margin: 0 0 22px; padding: 14px 16px;
  background: var(--soft); border-radius: 8px; font-size: 14px; }
dl.summary dt { color: var(--muted); }
dl.summary dd { margin: 0; text-align: right; overflow-wrap: anywhere; }
.wallets { display: grid; gap: 10px; margin: 0; }
.wallet { width: 100%; height: 44px; border-radius: 8px; font: 600 16px/1 inherit; font-family: inherit;
  cursor: pointer; }
.wallet.apple { background: #000; color: #fff; border: 0; }
.wallet.google { background: #fff; color: #3c4043; border: 1px solid #747775; }
.wallet .brand-g { font-weight: 700; color: #4285f4; }
.divider { display: flex; align-items: center; gap: 12px; margin: 20px 0; color: var(--muted); font-size: 14px; }
.divider::before, .divider::after { content: ""; flex: 1; border-top: 1px solid var(--line); }
.field { margin: 0 0 14px; }
.row { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
label { display: block; margin: 0 0 6px; font-size: 14px; font-weight: 500; }
input { width: 100%; height: 42px; padding: 0 12px; border: 1px solid var(--line); border-radius: 6px;
  font: 16px/1 inherit; font-family: inherit; color: var(--ink); background: #fff; }
input:focus { outline: 2px solid rgba(59, 73, 223, .35); border-color: var(--accent); }
input[aria-invalid="true"] { border-color: var(--bad); }
.error { min-height: 1em; margin: 4px 0 0; color: var(--bad); font-size: 13px; }
.error:empty { display: none; }
.pay { width: 100%; height: 46px; margin-top: 6px; border: 0; border-radius: 8px; background: var(--accent);
  color: #fff; font: 600 17px/1 inherit; font-family: inherit; cursor: pointer; }
.pay:hover, .pay:focus { background: #2f3cc4; }
.hint { margin: 0 0 16px; padding: 10px 12px; border: 1px dashed #c9a227; border-radius: 6px; background: #fffaf0;
  font-size: 13px; color: #5c4400; }
.note { color: var(--muted); font-size: 14px; }
.shortcuts { margin: 20px 0 0; padding: 12px; border: 1px dashed var(--line); border-radius: 8px; }
.shortcuts button { margin: 4px 6px 0 0; }
.return { display: inline-block; margin-top: 8px; color: var(--accent); font-weight: 600; }
footer { margin: 22px 0 0; color: var(--muted); font-size: 12px; text-align: center; }
table { width: 100%; border-collapse: collapse; font-size: 14px; }
th, td { padding: 6px 0; border-bottom: 1px solid var(--line); text-align: left; }
`;
