/**
 * The HTML documents the server writes itself: the app's shell (the script does the rest) and the
 * sign-in and error pages, which work without script. Every value placed in them goes through
 * `escapeHtml`; the markup is a fixed template.
 */
import type { Assets } from './assets.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Marks a fragment as HTML already escaped, so it is not escaped again. */
export class Html {
  constructor(readonly value: string) {}
}

/** A template tag: interpolated strings are escaped, `Html` fragments and arrays of them are not. */
export function html(strings: TemplateStringsArray, ...values: Array<string | number | Html | Html[]>): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    const text = value instanceof Html ? value.value : Array.isArray(value) ? value.map((v) => v.value).join('') : escapeHtml(String(value));
    out += text + strings[i + 1]!;
  });
  return new Html(out);
}

export interface DocumentOptions {
  title: string;
  /** The page's content; for the app, its mount point. */
  body: Html;
  /** Load the app's script (the shell); sign-in and error pages need none. */
  app?: boolean;
}

export function documentHtml(assets: Assets, { title, body, app = false }: DocumentOptions): string {
  const entry = assets.entry('main');
  const stylesheet = entry?.css ? html`<link rel="stylesheet" href="${entry.css}">` : html``;
  const script = app && entry ? html`<script type="module" src="${entry.js}"></script>` : html``;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>${title}</title>
<link rel="icon" href="data:,">
${stylesheet}
${script}
</head>
<body>
${body}
</body>
</html>
`.value;
}
